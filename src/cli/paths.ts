/** Files shipped with engine, found relative to the built CLI. */
import { fileURLToPath } from 'node:url';

export const SHIPPED_TAGS = fileURLToPath(new URL('../../directives/TAGS.md', import.meta.url));

/** This engine's entry point: the `engine` that agents find on their PATH runs it. */
export const ENGINE_MAIN = fileURLToPath(new URL('./main.js', import.meta.url));
