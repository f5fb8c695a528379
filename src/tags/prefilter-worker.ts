/** Worker thread body for `find`'s prefilter: runs units sent by prefilterTree. */
import { parentPort, workerData } from 'node:worker_threads';
import { BoundedReader } from './bounded-reader.js';
import { runUnit, type PrefilterUnit } from './prefilter-unit.js';

const reader = new BoundedReader(Buffer.from(workerData as Uint8Array));

parentPort?.on('message', (unit: PrefilterUnit) => {
  parentPort?.postMessage(runUnit(unit, reader));
});

parentPort?.postMessage({ ready: true });
