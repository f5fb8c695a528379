/**
 * Starts a worker thread from a module of tags/: named `../tags/` so that the CLI's bundle in
 * dist/cli/ (scripts/bundle-lean.mjs) finds it too. Run from the TypeScript sources (tests),
 * the worker registers tsx in its own thread and then loads the .ts file; `--import tsx` in a
 * worker's execArgv does not take effect on Node 20.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

const fromSource = import.meta.url.endsWith('.ts');

/** `name`: the module's file name without its extension, e.g. 'scan-worker'. */
export function startWorker(name: string, options: WorkerOptions = {}): Worker {
  if (!fromSource) return new Worker(new URL(`../tags/${name}.js`, import.meta.url), options);
  const tsxPackage = pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsx = new URL('dist/esm/api/index.mjs', tsxPackage).href;
  const worker = new URL(`./${name}.ts`, import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(worker)}); });`;
  return new Worker(code, { ...options, eval: true });
}
