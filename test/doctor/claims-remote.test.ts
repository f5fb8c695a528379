/**
 * The `claims-remote` check with real git: a bare repository as the remote (a path, and `git
 * daemon` on 127.0.0.1), a clone as the project, the real test push.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkClaimsRemote, testPushRefs } from '../../src/doctor/claims-remote.js';
import { gitDaemon } from '../claims/git-daemon.js';
import { silentServer } from '../claims/silent-server.js';
import { sharedRemote, type SharedRemote } from '../claims/git-remote.js';
import { loadSettings } from '../../src/settings/load-settings.js';
import { contextOf, probeOf } from './doctor-context.js';

let remote: SharedRemote;
let clone: string;

function engineJson(keys: Record<string, string>): void {
  writeFileSync(join(clone, 'directives', 'engine.json'), JSON.stringify(keys));
}

/** The check as doctor runs it: the settings loaded from the clone's engine.json and `env`. */
async function check(env: NodeJS.ProcessEnv = {}) {
  const { settings } = await loadSettings(clone, {}, env);
  const probe = probeOf({}, { pushTestRefs: testPushRefs });
  return checkClaimsRemote(contextOf({ root: clone, settings, probe }));
}
const refsLeft = () =>
  remote.git(remote.bare, 'for-each-ref', '--format=%(refname)', 'refs/engine/');

beforeEach(() => {
  remote = sharedRemote({ 'directives/engine.json': '{}\n' });
  clone = remote.host('host');
});
afterEach(() => remote.cleanup());

describe('doctor: the remote accepts engine refs', () => {
  it('SKIPs when claims are local', async () => {
    expect(await check()).toMatchObject({ id: 'claims-remote', status: 'SKIP' });
    engineJson({ claims: 'local' });
    expect((await check()).status).toBe('SKIP');
  });

  it('PASSes when a test ref is pushed and deleted, and leaves nothing on the remote', async () => {
    engineJson({ claims: 'git' });
    const result = await check();
    expect(result.status).toBe('PASS');
    expect(result.summary).toMatch(
      /^remote "origin" accepts engine's refs \(pushed and deleted refs\/engine\/doctor\/[0-9a-f]{12}\)$/,
    );
    expect(refsLeft()).toBe('');
  });

  it('FAILs with the fix when a hook refuses refs/engine/*', async () => {
    engineJson({ claims: 'git' });
    const hook = join(remote.bare, 'hooks', 'pre-receive');
    writeFileSync(
      hook,
      '#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/engine/*) echo "no engine refs" >&2; exit 1;; esac; done\n',
    );
    chmodSync(hook, 0o755);
    const result = await check();
    expect(result.status).toBe('FAIL');
    expect(result.summary).toMatch(
      /^remote "origin" refused a push of refs\/engine\/doctor\/\w+: /,
    );
    expect(result.fix).toContain('let this user push refs/engine/* to the remote');
    expect(refsLeft()).toBe('');
  });

  it('WARNs when the remote cannot be reached; FAILs when there is no such remote', async () => {
    engineJson({ claims: 'git' });
    remote.git(clone, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
    const result = await check();
    expect(result.status).toBe('WARN');
    expect(result.summary).toContain('cannot reach remote "origin"');
    engineJson({ claims: 'git', claimsRemote: 'shared' });
    expect(await check()).toMatchObject({
      status: 'FAIL',
      fix: 'git remote add shared URL, or set "claimsRemote"',
    });
  });

  it('reads the mode and remote from the settings: ENGINE_CLAIMS and ENGINE_CLAIMS_REMOTE too', async () => {
    remote.git(clone, 'remote', 'add', 'shared', remote.bare);
    const result = await check({ ENGINE_CLAIMS: 'git', ENGINE_CLAIMS_REMOTE: 'shared' });
    expect(result.summary).toMatch(/^remote "shared" accepts engine's refs/);
  });

  it('WARNs at the deadline when the remote accepts and never answers', async () => {
    engineJson({ claims: 'git' });
    const server = await silentServer();
    try {
      remote.git(clone, 'remote', 'set-url', 'origin', server.url);
      const { settings } = await loadSettings(clone, {}, {});
      const probe = probeOf({}, { pushTestRefs: (dir, name) => testPushRefs(dir, name, 1000) });
      const started = Date.now();
      const result = await checkClaimsRemote(contextOf({ root: clone, settings, probe }));
      expect(result.status).toBe('WARN');
      expect(result.summary).toContain('no answer within 1 s');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await server.stop();
    }
  });

  it('FAILs when the remote takes the test ref but hides it from reads (uploadpack.hideRefs)', async () => {
    engineJson({ claims: 'git' });
    remote.git(remote.bare, 'config', 'uploadpack.hideRefs', 'refs/engine');
    const result = await check();
    expect(result.status).toBe('FAIL');
    expect(result.summary).toMatch(/hides it from reads .*: no host would see another's claims$/);
    expect(result.fix).toContain('uploadpack.hideRefs');
    expect(refsLeft()).toBe('');
  });

  it('pushes one ref name per clone, over what a server that denies deletes kept', async () => {
    engineJson({ claims: 'git' });
    const hook = join(remote.bare, 'hooks', 'pre-receive');
    writeFileSync(
      hook,
      '#!/bin/sh\nwhile read old new ref; do case "$new" in 0000000000000000000000000000000000000000) exit 1;; esac; done\n',
    );
    chmodSync(hook, 0o755);
    const first = await check();
    expect(first.status).toBe('WARN');
    const left = refsLeft();
    expect(left).toMatch(/^refs\/engine\/doctor\/[0-9a-f]{12}\n$/);
    expect((await check()).status).toBe('WARN');
    expect(refsLeft()).toBe(left);
  });

  it('pushes to claimsRemote', async () => {
    engineJson({ claims: 'git', claimsRemote: 'shared' });
    remote.git(clone, 'remote', 'add', 'shared', remote.bare);
    remote.git(clone, 'remote', 'set-url', 'origin', join(remote.dir, 'gone.git'));
    expect((await check()).summary).toMatch(/^remote "shared" accepts engine's refs/);
  });

  it('over git daemon: FAILs when it serves reads only, PASSes when it takes pushes', async () => {
    engineJson({ claims: 'git' });
    for (const receivePack of [false, true]) {
      const server = await gitDaemon(remote.dir, 'remote.git', { receivePack });
      try {
        remote.git(clone, 'remote', 'set-url', 'origin', server.url('remote.git'));
        const result = await check();
        expect(result.status, result.summary).toBe(receivePack ? 'PASS' : 'FAIL');
      } finally {
        await server.stop();
      }
    }
    expect(refsLeft()).toBe('');
  });
});
