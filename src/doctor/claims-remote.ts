/**
 * The `claims-remote` check: with `"claims": "git"`, the daemons share claims through refs in
 * engine's own namespace on the remote, which a server may refuse (a hook, a protected-ref rule,
 * a read-only URL) or hide from reads (uploadpack.hideRefs) while it takes branch pushes. A test
 * push of this clone's `refs/engine/doctor/<id>`, a read of it, then its delete, each push by
 * compare-and-swap, tells before a daemon depends on it.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { isAbsolute, join } from 'node:path';
import {
  checkRemote,
  ENGINE_IDENTITY,
  pushUrl,
  readRemoteRef,
  remoteValue,
  swapRef,
} from '../claims/claim-refs.js';
import { messageOf } from '../errors.js';
import { cloneTop, gitOk, NETWORK_DEADLINE_MS } from '../process/run-git.js';
import {
  fail,
  pass,
  skip,
  warn,
  type CheckResult,
  type DoctorContext,
  type RefPushOutcome,
} from './doctor-check.js';

/**
 * Pushes a commit to this clone's test ref, reads it back through the fetch URL and deletes it;
 * the real probe's. The ref's name is the same at each run of a clone (doctorRefOf), and is
 * pushed over its value now: a server that denies deletes keeps one ref per clone, not one per
 * run.
 */
export async function testPushRefs(
  dir: string,
  remote: string,
  deadlineMs = NETWORK_DEADLINE_MS,
): Promise<RefPushOutcome> {
  const repo = await cloneTop(dir);
  if (repo === null) return { kind: 'no-clone', message: `${dir} is not in a git clone` };
  try {
    checkRemote(remote);
  } catch (error) {
    return { kind: 'no-remote', message: messageOf(error) };
  }
  if ((await pushUrl({ repo, remote })) === null)
    return { kind: 'no-remote', message: `${repo} has no remote "${remote}"` };
  const where = { repo, remote, deadlineMs };
  const ref = await doctorRefOf(repo);
  const before = await readRemoteRef(where, ref);
  if ('error' in before) return { kind: 'unreachable', ref, message: before.error };
  const commit = await testCommit(repo);
  const push = await swapRef(where, ref, before.value, commit);
  if (push.kind === 'lost') {
    return { kind: 'refused', ref, message: 'the test ref changed while it was pushed' };
  }
  if (push.kind !== 'done') {
    // No answer for the ref: a server that answers a read refused the push itself.
    const reads = push.kind === 'unreachable' && 'value' in (await readRemoteRef(where, ref));
    const kind = push.kind === 'refused' || reads ? 'refused' : 'unreachable';
    return { kind, ref, message: push.message };
  }
  // A server may take the ref and hide it from reads (uploadpack.hideRefs): no host would see
  // another's claims.
  const seen = await remoteValue(where, ref);
  const removed = await swapRef(where, ref, commit, null);
  if (seen !== commit) return { kind: 'hidden', ref, message: readBack(seen) };
  return removed.kind === 'done'
    ? { kind: 'accepted', ref, message: '' }
    : { kind: 'left', ref, message: 'message' in removed ? removed.message : 'it changed since' };
}

function readBack(seen: string | null | undefined): string {
  if (seen === undefined) return 'it could not be read back';
  return seen === null ? 'a read of the remote does not show it' : `a read shows ${seen}`;
}

/** This clone's test ref: named by the host and the clone's git directory, the same each run. */
async function doctorRefOf(repo: string): Promise<string> {
  const dir = (await gitOk(repo, ['rev-parse', '--git-common-dir'])).trim();
  const common = isAbsolute(dir) ? dir : join(repo, dir);
  const id = createHash('sha256').update(`${hostname()}\0${common}`).digest('hex');
  return `refs/engine/doctor/${id.slice(0, 12)}`;
}

async function testCommit(repo: string): Promise<string> {
  const tree = (await gitOk(repo, ['mktree'], { input: '' })).trim();
  const args = ['commit-tree', tree, '-m', 'engine doctor: a test push'];
  return (await gitOk(repo, args, { env: ENGINE_IDENTITY })).trim();
}

const ALLOW =
  'let this user push refs/engine/* to the remote: a pre-receive hook, a protected-ref rule (GitHub rulesets, GitLab push rules) or a read-only URL refuses them (git remote set-url --push REMOTE a writable URL)';

export async function checkClaimsRemote(ctx: DoctorContext): Promise<CheckResult> {
  const id = 'claims-remote';
  if (ctx.root === null) return skip(id, 'no engine project here');
  if (ctx.settingsError !== null) return skip(id, 'the settings cannot be read (see settings)');
  const setup = { remote: ctx.settings.claimsRemote };
  if (ctx.settings.claims === 'local')
    return skip(
      id,
      'claims are local (the "claims" setting is not "git"; ENGINE_CLAIMS=git engine doctor checks the remote)',
    );
  const where = `remote "${setup.remote}"`;
  const outcome = await ctx.probe.pushTestRefs(ctx.root, setup.remote);
  switch (outcome.kind) {
    case 'accepted':
      return pass(id, `${where} accepts engine's refs (pushed and deleted ${outcome.ref})`);
    case 'no-clone':
      return fail(id, outcome.message, 'run engine in a clone of the shared repository');
    case 'no-remote':
      return fail(id, outcome.message, `git remote add ${setup.remote} URL, or set "claimsRemote"`);
    case 'refused':
      return fail(id, `${where} refused a push of ${outcome.ref}: ${outcome.message}`, ALLOW);
    case 'unreachable':
      return warn(
        id,
        `cannot reach ${where}: ${outcome.message}`,
        `check the network and the URL (git ls-remote ${setup.remote}); daemons claim nothing while it is unreachable`,
      );
    case 'hidden':
      return fail(
        id,
        `${where} took a push of ${outcome.ref} but hides it from reads (${outcome.message}): no host would see another's claims`,
        'let reads show refs/engine/*: drop it from uploadpack.hideRefs and transfer.hideRefs on the server (or its ref filter), or fetch from a URL that shows them',
      );
    case 'left':
      return warn(
        id,
        `${where} took a push of ${outcome.ref} but not its delete: ${outcome.message}; releases and prunes will fail`,
        `allow deletes of refs/engine/* for this user, then git push ${setup.remote} :${outcome.ref}`,
      );
  }
}
