// `npm run test:claude`, first step: installs the pinned Claude Code CLI into .cache/claude-code/
// (its own package.json and lock there, so engine's stay free of it), and writes the one script
// the tests run it through. Skips the install when the pinned version is already there.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  closeSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import {
  CLAUDE_CODE_BIN,
  CLAUDE_CODE_DIR,
  CLAUDE_CODE_PACKAGE,
  CLAUDE_CODE_VERSION,
} from './claude-code.js';

function installedVersion(): string | null {
  try {
    const manifest = JSON.parse(
      readFileSync(join(CLAUDE_CODE_PACKAGE, 'package.json'), 'utf8'),
    ) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : null;
  } catch {
    return null;
  }
}

function isElf(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    closeSync(fd);
  }
}

const quote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * The wrapper's postinstall copies the native binary over bin/claude.exe; npm may not run it (npm
 * 11 asks for allowScripts). Without the copy, cli-wrapper.cjs finds and runs the binary itself.
 */
function runCommand(): string {
  const native = join(CLAUDE_CODE_PACKAGE, 'bin', 'claude.exe');
  if (isElf(native)) return quote(native);
  return `${quote(process.execPath)} ${quote(join(CLAUDE_CODE_PACKAGE, 'cli-wrapper.cjs'))}`;
}

function install(): void {
  mkdirSync(CLAUDE_CODE_DIR, { recursive: true });
  const manifest = {
    name: 'engine-test-claude-code',
    private: true,
    description: 'The Claude Code CLI for npm run test:claude; not a dependency of engine.',
    dependencies: { '@anthropic-ai/claude-code': CLAUDE_CODE_VERSION },
    allowScripts: { '@anthropic-ai/claude-code': true },
  };
  writeFileSync(join(CLAUDE_CODE_DIR, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // The package asks for Node 22, but what runs is its native binary: engine-strict (set on some
  // machines, this one included) must not refuse it under engine's Node 20.
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--engine-strict=false'], {
    cwd: CLAUDE_CODE_DIR,
    stdio: 'inherit',
  });
  const version = installedVersion();
  if (version !== CLAUDE_CODE_VERSION)
    throw new Error(
      `npm installed @anthropic-ai/claude-code ${version}, expected ${CLAUDE_CODE_VERSION}`,
    );
}

const started = Date.now();
const present = installedVersion() === CLAUDE_CODE_VERSION;
if (!present) install();
mkdirSync(dirname(CLAUDE_CODE_BIN), { recursive: true });
writeFileSync(CLAUDE_CODE_BIN, `#!/bin/sh\nexec ${runCommand()} "$@"\n`);
chmodSync(CLAUDE_CODE_BIN, 0o755);
const printed = execFileSync(CLAUDE_CODE_BIN, ['--version'], {
  encoding: 'utf8',
  // No update check or telemetry from this machine's own Claude Code setup.
  env: { ...process.env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
}).trim();
if (!printed.startsWith(`${CLAUDE_CODE_VERSION} `))
  throw new Error(
    `${CLAUDE_CODE_BIN} --version printed ${JSON.stringify(printed)}, expected ${CLAUDE_CODE_VERSION}`,
  );
console.log(
  present
    ? `Claude Code ${CLAUDE_CODE_VERSION} already in ${CLAUDE_CODE_DIR}`
    : `installed Claude Code ${CLAUDE_CODE_VERSION} in ${CLAUDE_CODE_DIR} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
