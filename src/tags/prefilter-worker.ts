/** Worker thread body for `find`'s prefilter: reads units sent by prefilterTree. */
import { parentPort, workerData } from 'node:worker_threads';
import { BoundedReader } from './bounded-reader.js';
import {
  readUnit,
  workerResult,
  type PrefilterUnit,
  type PrefilterWorkerData,
} from './prefilter-unit.js';

const { needle, texts } = workerData as PrefilterWorkerData;
const reader = new BoundedReader(Buffer.from(needle));

parentPort?.on('message', (unit: PrefilterUnit) => {
  parentPort?.postMessage(workerResult(readUnit(unit, reader), texts));
});

parentPort?.postMessage({ ready: true });
