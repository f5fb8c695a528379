// Part of `npm run build`: the board's page (served as it is, no build) is copied beside the
// compiled board, so the package ships dist/ alone and never src/.
import { cpSync, rmSync } from 'node:fs';

const from = new URL('../src/board/page/', import.meta.url);
const to = new URL('../dist/board/page/', import.meta.url);
rmSync(to, { recursive: true, force: true });
cpSync(from, to, { recursive: true });
