/** Worker thread body for ScanPool: runs the tag locator off the main thread. */
import { parentPort } from 'node:worker_threads';
import { scanTags } from './scan-tags.js';
import type { ScanRequest, ScanResponse, WorkerReady } from './scan-pool.js';

parentPort?.on('message', (request: ScanRequest) => {
  let response: ScanResponse;
  try {
    const scan = scanTags(request.text);
    response = { id: request.id, occurrences: scan.occurrences, problems: scan.problems };
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(response);
});

// Modules are loaded: from now on the pool's time limit measures parsing only.
parentPort?.postMessage({ ready: true } satisfies WorkerReady);
