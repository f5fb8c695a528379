// Part of `npm run build`: the `engine` command as one CommonJS module, dist/cli/main.cjs (the
// package's bin), bundled from src/cli/main.ts with the lean path of `engine status` and
// `engine tag find` (src/cli/lean-entry.ts) inside it. Node starts a CommonJS main module about
// 15 ms sooner than an ES module here (its ES module loader is not started), and loads one file
// instead of about 40. What the lean path does not answer goes to the full CLI, dist/cli/full-cli.js
// and the rest of tsc's ES modules, by import(); `engine tag find` over the files is a CommonJS
// module of its own (below). Every module of src/ lies one folder deep, so `../x.js` and
// `import.meta.url`'s `../../package.json` name the same files from the bundles in dist/cli/ as
// from their own folders (start-worker.ts finds the workers in dist/tags/ so). tsc's
// lean-entry.js is removed, and its main.js becomes a stub that loads main.cjs: a service unit or
// an agent's `engine` shim written by an earlier build names dist/cli/main.js, and must still run
// after a pull and a build.
//
// The prefilter worker of `find` over the files (src/tags/prefilter-worker.ts, a thread each
// `engine tag find` without a daemon starts) is bundled the same way, over tsc's
// dist/tags/prefilter-worker.js, where prefilter-tree.ts starts it: the worker loads one module
// instead of about 12 before its first read. Nothing it holds is shared with the main thread.
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = (path) => fileURLToPath(new URL(`../dist/${path}`, import.meta.url));

/**
 * The first two lines of main.cjs: a sh script that runs the file with node, and JavaScript from
 * then on (sh reads `":"` as its no-op `:`; JavaScript reads a string and a comment). Node parses
 * a NODE_EXTRA_CA_CERTS bundle at start, before any JavaScript runs (about 80 ms for the system
 * bundle on Node 20 here, nodejs/node#40524); `engine status` and `engine tag` open no TLS
 * connection and start no program that would, so the launcher leaves the variable out of their
 * environment. `engine run` gets MALLOC_ARENA_MAX=2 unless it is set (even empty): glibc gives
 * each thread that allocates an arena of its own, and the daemon's threads (V8's, libuv's, the
 * first pass's workers) left about 10 MB free in theirs, resident, at 50,000 files; the daemon
 * takes both variables out of its environment at once (run-daemon.ts), so its agents get the
 * user's. Every other command, and `node dist/cli/main.cjs`, gets the environment as it is.
 * docs/CLI.md says so.
 */
const LAUNCHER = [
  '#!/bin/sh',
  '":" //; case "$1" in status | tag) unset NODE_EXTRA_CA_CERTS ;; run) [ -n "${MALLOC_ARENA_MAX+set}" ] || export MALLOC_ARENA_MAX=2 ENGINE_LAUNCHER_ARENA=1 ;; esac; exec node "$0" "$@"',
];
/**
 * Strict as the ES modules it is made of (the directive joins `":"` in the directive prologue,
 * before any statement), and import.meta.url, which a CommonJS module lacks, from its own file.
 */
const PRELUDE = [
  "'use strict';",
  "const __engineModuleUrl = require('node:url').pathToFileURL(__filename).href;",
];

/** One module for Node 20 from `entry` (under src/) at `out` (under dist/). */
const bundle = (entry, out, options = {}) =>
  build({
    entryPoints: [fileURLToPath(new URL(`../src/${entry}`, import.meta.url))],
    outfile: dist(out),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    allowOverwrite: true,
    logLevel: 'warning',
    ...options,
  });

// `engine tag find` over the files, its own CommonJS module beside main.cjs, which requires it
// (tag-find.ts, loadFind): imported as tsc's ES modules it started Node's ES module loader, about
// 40 ms before the first read; inside main.cjs, every command would parse it (about 6 ms of CPU
// more for an `engine status` a daemon answers).
await bundle('tags/find-tagged-files.ts', 'cli/find-files.cjs', {
  format: 'cjs',
  define: { 'import.meta.url': '__engineModuleUrl' },
  banner: { js: PRELUDE.join('\n') },
});
await bundle('cli/main.ts', 'cli/main.cjs', {
  format: 'cjs',
  external: [
    './full-cli.js',
    'yargs/helpers',
    '../tags/find-tagged-files.js',
    '../status/collect-status.js',
  ],
  define: { 'import.meta.url': '__engineModuleUrl' },
  banner: { js: [...LAUNCHER, ...PRELUDE].join('\n') },
});
// Runnable as it is (the bench runs it so); npm sets a bin's mode on install anyway.
chmodSync(dist('cli/main.cjs'), 0o755);
for (const name of ['main.js.map', 'lean-entry.js', 'lean-entry.js.map'])
  rmSync(dist(`cli/${name}`), { force: true });
writeFileSync(
  dist('cli/main.js'),
  "#!/usr/bin/env node\n// The entry of earlier builds, kept for what names it: the one entry is main.cjs.\nimport './main.cjs';\n",
);
await bundle('tags/prefilter-worker.ts', 'tags/prefilter-worker.js');
