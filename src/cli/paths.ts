/** Files shipped with engine, found relative to the built CLI. */
import { fileURLToPath } from 'node:url';

export const SHIPPED_TAGS = fileURLToPath(new URL('../../directives/TAGS.md', import.meta.url));
