/**
 * `engine claims list|release|prune`: the claim refs of many hosts on the shared remote
 * (docs/MULTI-HOST.md), looked at and tidied by a person.
 */
import { realpath } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { checkRemote, pushUrl, type ClaimRemote, type SeenClaim } from '../claims/claim-refs.js';
import { fetchClaimsSeen, viewOf, type ClaimView } from '../claims/claims-view.js';
import { cloneTop } from '../process/run-git.js';
import { itemIdOf } from '../claims/item-id.js';
import { isItemId } from '../claims/lease.js';
import { PRUNE_AFTER_MS, prunable, pruneClaims } from '../claims/prune-claims.js';
import { releaseClaim } from '../claims/release-claim.js';
import { EngineError, messageOf } from '../errors.js';
import { loadSettings } from '../settings/load-settings.js';
import { numberOption, rootOption } from './arguments.js';
import { claimNames, claimText, claimViewLines } from './claim-lines.js';
import { duration, relativeTime, wrap } from './fit-width.js';
import { printJson, printLine } from './output.js';
import { projectRoot } from './project-root.js';

interface CommonArgs {
  root?: string;
  remote?: string;
}

function common<T>(yargs: Argv<T>): Argv<T> {
  return yargs
    .option('root', rootOption('Project root, in a clone of the shared remote'))
    .option('remote', {
      type: 'string',
      describe:
        'The git remote the claims are shared on (default: the claimsRemote setting, origin unless engine.json or ENGINE_CLAIMS_REMOTE says otherwise)',
    }) as never;
}

/** The clone and remote of the command; an error naming what is missing. */
async function claimRemoteOf(args: CommonArgs): Promise<ClaimRemote> {
  const root = await projectRoot(args.root);
  const repo = await cloneTop(root);
  if (repo === null) throw new EngineError(`${root} is not in a git clone: no claims to look at`);
  const remote = args.remote ?? (await loadSettings(root, {}, process.env)).settings.claimsRemote;
  try {
    checkRemote(remote);
  } catch (error) {
    throw new EngineError(`--remote: ${messageOf(error)}`);
  }
  const where = { repo, remote };
  if ((await pushUrl(where)) === null)
    throw new EngineError(`${repo} has no remote "${remote}" (git remote -v lists them)`);
  return where;
}

async function fetchOrFail(where: ClaimRemote, now: Date) {
  const seen = await fetchClaimsSeen(where, now);
  if (seen === null)
    throw new EngineError(
      `cannot fetch the claims of remote "${where.remote}": it could not be reached (git fetch failed); nothing is known of its claims`,
    );
  return seen;
}

function listLines(views: ClaimView[], remote: string, fetchedAt: string, now: Date): string[] {
  const when = `fetched ${relativeTime(fetchedAt, now)}`;
  if (views.length === 0) return [`No claims on remote "${remote}" (${when}).`];
  return [
    `Claims on remote "${remote}" (${views.length}, ${when}):`,
    ...claimViewLines(views, now),
  ];
}

interface ListArgs extends CommonArgs {
  json: boolean;
}

const listCommand: CommandModule<object, ListArgs> = {
  command: 'list',
  describe:
    "Fetch the claim refs of the shared remote and list each claim: item, file, noun, held or done, holder (host, instance, boot), attempt, lease, and its renewal's age by the record's own clock",
  builder: (yargs) =>
    common(yargs)
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'The claims as JSON: {remote, fetchedAt, claims}',
      })
      .example('$0 claims list', 'The claims of every host on origin')
      .example(
        '$0 claims list --remote shared --json',
        'Those of another remote, for a script',
      ) as never,
  handler: async (args) => {
    const now = new Date();
    const seen = await fetchOrFail(await claimRemoteOf(args), now);
    const views = seen.claims.map((c) => viewOf(c, now.getTime()));
    if (args.json) printJson({ remote: seen.remote, fetchedAt: seen.fetchedAt, claims: views });
    else printLine(listLines(views, seen.remote, seen.fetchedAt!, now).join('\n'));
  },
};

/** An item id as given, or the id of the file at that path in HEAD's history. */
async function itemOf(given: string, repo: string): Promise<string> {
  if (isItemId(given)) return given;
  const absolute = resolve(given);
  // git names the clone by its real path: a symlinked directory on the way is resolved alike.
  const path = relative(repo, await realpath(absolute).catch(() => absolute));
  if (path === '' || path === '..' || path.startsWith(`..${sep}`))
    throw new EngineError(`${given} is not a file of the clone ${repo}`);
  const id = await itemIdOf(repo, 'HEAD', path);
  if (id === null)
    throw new EngineError(
      `${given}: not a file in HEAD's tree, so it names no item (engine claims list shows the item ids)`,
    );
  return id;
}

function whose(claim: SeenClaim, now: Date): string {
  const v = viewOf(claim, now.getTime());
  const { item, file, noun } = claimNames(v);
  return `${item} (${file} #${noun}): ${claimText(v, now)}`;
}

interface ReleaseArgs extends CommonArgs {
  item: string;
  force: boolean;
}

const RE_APPROVE =
  "The shared branch is unchanged: its Tags line says what it said. To run the item again, approve it again (engine tag swap FILE '#done-X' '#delegated-X', or from #claimed-X), commit and push.";

const releaseCommand: CommandModule<object, ReleaseArgs> = {
  command: 'release <item>',
  describe:
    "Delete an item's claim ref on the shared remote by compare-and-swap from the value just read; a held claim needs --force. The shared branch is not touched",
  builder: (yargs) =>
    common(yargs)
      .positional('item', {
        type: 'string',
        describe:
          'An item id (engine claims list shows them; a name of only a-z, 0-9 and - is one) or a request file in this clone',
      })
      .option('force', {
        type: 'boolean',
        default: false,
        describe:
          "Release a held claim (which may be live however old its record says it is: that is the holder's clock) or an unreadable one: its holder's work is then fenced",
      })
      .example('$0 claims release sessions/fix-login.md', 'Release a done or released claim')
      .example(
        '$0 claims release fix-login-1a2b3c4d5e6f7a8b --force',
        'Take a live claim from its holder',
      ) as never,
  handler: async (args) => {
    const where = await claimRemoteOf(args);
    const item = await itemOf(args.item, where.repo);
    const now = new Date();
    const outcome = await releaseClaim(where, item, { force: args.force });
    switch (outcome.kind) {
      case 'released':
        return printLine(
          [`released ${whose(outcome.claim, now)}`, ...wrap(RE_APPROVE, '', '')].join('\n'),
        );
      case 'live':
        throw new EngineError(
          `not released: ${whose(outcome.claim, now)}. It is held, so it may be live whatever its record's clock says: --force releases it, and fences its holder's work`,
        );
      case 'lost':
        throw new EngineError(
          `not released: the claim of ${item} changed while it was being released (a renewal or a takeover); engine claims list shows it now`,
        );
      case 'absent':
        throw new EngineError(`no claim of ${item} on remote "${where.remote}"`);
      case 'refused':
        throw new EngineError(
          `remote "${where.remote}" refused the release of ${item}: ${outcome.message}`,
        );
      case 'unreachable':
        throw new EngineError(`cannot release ${item}: ${outcome.message}`);
    }
  },
};

interface PruneArgs extends CommonArgs {
  'older-than': number;
}

const pruneCommand: CommandModule<object, PruneArgs> = {
  command: 'prune',
  describe:
    "Delete the claim refs of done items ended longer ago than --older-than (by the record's time), each by compare-and-swap",
  builder: (yargs) =>
    common(yargs)
      .option(
        'older-than',
        numberOption('older-than', {
          range: { min: 0, max: Number.MAX_SAFE_INTEGER, whole: false },
          unit: 'hours',
          default: PRUNE_AFTER_MS / 3600_000,
          describe: "Hours since a done claim's end, by its record's time",
        }),
      )
      .example('$0 claims prune', 'Delete the refs of items done over a day ago')
      .example('$0 claims prune --older-than 0', 'Delete the refs of every done item') as never,
  handler: async (args) => {
    const where = await claimRemoteOf(args);
    const now = new Date();
    const seen = await fetchOrFail(where, now);
    const chosen = prunable(seen.claims, now.getTime(), args['older-than'] * 3600_000);
    if (chosen.length === 0) {
      const age = duration(args['older-than'] * 3600_000);
      return printLine(
        `No done claims older than ${age} on remote "${where.remote}" (${seen.claims.length} claims).`,
      );
    }
    const failed: string[] = [];
    for (const { item, outcome } of await pruneClaims(where, chosen)) {
      if (outcome.kind === 'done') printLine(`pruned ${item}`);
      else if (outcome.kind === 'lost') printLine(`kept ${item}: it changed since it was read`);
      else if (outcome.kind === 'gone')
        printLine(`gone ${item}: deleted by another since it was read`);
      else failed.push(`${item}: ${outcome.kind}: ${outcome.message}`);
    }
    if (failed.length > 0) throw new EngineError(`not pruned: ${failed.join('; ')}`);
  },
};

export const claimsCommand: CommandModule = {
  command: 'claims <command>',
  describe: 'The claims of many hosts on the shared git remote (docs/MULTI-HOST.md)',
  builder: (yargs) =>
    yargs
      .command(listCommand as CommandModule)
      .command(releaseCommand as CommandModule)
      .command(pruneCommand as CommandModule)
      .demandCommand(1)
      .example('$0 claims list', 'Which host holds what')
      .example('$0 claims release sessions/fix-login.md', 'Let an item be claimed anew'),
  handler: () => undefined,
};
