// Types for the parts of the benchmark helpers the tests use (test/index/tag-index.test.ts).
/** mulberry32: a seeded PRNG giving numbers in [0, 1), the same sequence on every machine. */
export function rng(seed: number): () => number;
