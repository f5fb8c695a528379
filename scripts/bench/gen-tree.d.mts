// Types for the parts of the benchmark generator the tests use (test/tags/scan-fast.test.ts).
export function fileText(
  seed: number,
  index: number,
  kind: string,
  lifecycleShare?: number,
): string;
export function kinds(seed: number, files: number): string[];
