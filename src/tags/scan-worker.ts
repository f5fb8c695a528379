/** Worker thread body for ScanPool: runs the tag locator off the main thread. */
import { parentPort } from 'node:worker_threads';
import { scanTags } from './scan-tags.js';
import { summaryOf, type ScanRequest, type ScanResponse, type WorkerReady } from './scan-pool.js';

parentPort?.on('message', (request: ScanRequest) => {
  let response: ScanResponse;
  try {
    response = { id: request.id, ...summaryOf(scanTags(request.text), request.text) };
  } catch (error) {
    response = { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(response);
});

// Modules are loaded: from now on the pool's time limit measures parsing only.
parentPort?.postMessage({ ready: true } satisfies WorkerReady);
