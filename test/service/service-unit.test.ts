/** The service files' content, as written: the systemd user unit and the launchd agent. */
import { describe, expect, it } from 'vitest';
import {
  captureEnvironment,
  launchdLabel,
  launchdPlist,
  serviceName,
  systemdUnit,
  type ServiceSpec,
} from '../../src/service/service-unit.js';

const spec: ServiceSpec = {
  root: '/home/ann/src/my app',
  entry: '/home/ann/.npm-global/bin/engine',
  logFile: '/home/ann/src/my app/sessions/.engine/daemon.log',
  environment: { HOME: '/home/ann', PATH: '/home/ann/.npm-global/bin:/usr/bin:/bin' },
  leftOut: ['ANTHROPIC_API_KEY'],
};

describe('serviceName', () => {
  it('is readable and one per root', () => {
    expect(serviceName('/home/ann/src/my app')).toMatch(/^engine-my-app-[0-9a-f]{8}$/);
    expect(serviceName('/a/app')).not.toBe(serviceName('/b/app'));
    expect(serviceName('/')).toMatch(/^engine-root-[0-9a-f]{8}$/);
  });
});

describe('captureEnvironment', () => {
  it('keeps what the agent needs, and leaves every secret out, by name', () => {
    const captured = captureEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/ann',
      TMUX_TMPDIR: '/run/t',
      ANTHROPIC_MODEL: 'opus',
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      ANTHROPIC_AUTH_TOKEN: 'tok',
      CLAUDE_CODE_OAUTH_TOKEN: 'tok',
      CLAUDE_CONFIG_DIR: '/home/ann/.claude',
      GITHUB_TOKEN: 'ghp',
      EDITOR: 'vi',
      LC_ALL: '',
      ANTHROPIC_CUSTOM_HEADERS: 'Authorization: Bearer sk-secret',
      ANTHROPIC_BEDROCK_BASE_URL: 'https://ann:pw@proxy.example',
      ANTHROPIC_VERTEX_PROJECT_ID: 'Bearer abc',
      ANTHROPIC_SOMETHING_NEW: 'x',
      CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8000',
      CLAUDE_CODE_USE_BEDROCK: '1',
    });
    expect(captured.environment).toEqual({
      ANTHROPIC_MODEL: 'opus',
      CLAUDE_CODE_MAX_OUTPUT_TOKENS: '8000',
      CLAUDE_CODE_USE_BEDROCK: '1',
      CLAUDE_CONFIG_DIR: '/home/ann/.claude',
      HOME: '/home/ann',
      PATH: '/usr/bin',
      TMUX_TMPDIR: '/run/t',
    });
    expect(captured.leftOut).toEqual([
      'ANTHROPIC_API_KEY',
      'ANTHROPIC_AUTH_TOKEN',
      'ANTHROPIC_BEDROCK_BASE_URL',
      'ANTHROPIC_CUSTOM_HEADERS',
      'ANTHROPIC_SOMETHING_NEW',
      'ANTHROPIC_VERTEX_PROJECT_ID',
      'CLAUDE_CODE_OAUTH_TOKEN',
    ]);
  });
});

describe('systemdUnit', () => {
  it('runs the daemon of the root through the bin link, KillMode=process, restarted on failure', () => {
    const unit = systemdUnit(spec);
    expect(unit).toContain('\nWorkingDirectory=/home/ann/src/my app\n');
    expect(unit).toContain(
      '\nExecStart=/bin/sh /home/ann/.npm-global/bin/engine run --monitor-tags --root "/home/ann/src/my app" --log-file "/home/ann/src/my app/sessions/.engine/daemon.log"\n',
    );
    expect(unit).toContain('\nEnvironment=HOME=/home/ann\n');
    expect(unit).toContain('\nEnvironment=PATH=/home/ann/.npm-global/bin:/usr/bin:/bin\n');
    for (const line of ['KillMode=process', 'Restart=on-failure', 'WantedBy=default.target'])
      expect(unit.split('\n')).toContain(line);
    expect(unit).toContain(
      '# Left out on purpose (secrets are never written here): ANTHROPIC_API_KEY.',
    );
  });

  it('quotes %, $, quotes and backslashes so that systemd reads them back as they are', () => {
    const odd = systemdUnit({
      ...spec,
      root: '/srv/50% "a"\\b$x',
      environment: { LANG: 'x%y $z' },
    });
    expect(odd).toContain('\nWorkingDirectory=/srv/50%% "a"\\b$x\n');
    expect(odd).toContain('--root "/srv/50%% \\"a\\"\\\\b$$x"');
    expect(odd).toContain('\nEnvironment="LANG=x%%y $z"\n');
  });

  it('refuses a path with a line break, which would add a line of its own', () => {
    expect(() => systemdUnit({ ...spec, root: '/srv/a\nExecStartPre=/bin/evil' })).toThrow(
      'a service cannot name a path with a line break',
    );
  });
});

describe('launchdPlist', () => {
  it('is a launchd agent for the root: its program, directory, environment, no kill of agents', () => {
    const plist = launchdPlist({ ...spec, root: '/Users/ann/a&b' });
    expect(launchdLabel('/Users/ann/a&b')).toMatch(/^mdtags\.engine-a-b-[0-9a-f]{8}$/);
    expect(plist).toContain(
      `<key>Label</key>\n  <string>${launchdLabel('/Users/ann/a&b')}</string>`,
    );
    expect(plist).toContain(
      [
        '  <key>ProgramArguments</key>',
        '  <array>',
        '    <string>/bin/sh</string>',
        '    <string>/home/ann/.npm-global/bin/engine</string>',
        '    <string>run</string>',
        '    <string>--monitor-tags</string>',
        '    <string>--root</string>',
        '    <string>/Users/ann/a&amp;b</string>',
        '    <string>--log-file</string>',
      ].join('\n'),
    );
    expect(plist).toContain('<key>WorkingDirectory</key>\n  <string>/Users/ann/a&amp;b</string>');
    expect(plist).toContain('    <key>HOME</key>\n    <string>/home/ann</string>');
    expect(plist).toContain('<key>SuccessfulExit</key>\n    <false/>');
    expect(plist).toContain('<key>AbandonProcessGroup</key>\n  <true/>');
    expect(plist).toContain('ANTHROPIC_API_KEY');
    expect(plist).not.toContain('sk-');
    // Well-formed: every element opened is closed.
    const opened = plist.match(/<(dict|array|plist)\b/g)?.length;
    expect(plist.match(/<\/(dict|array|plist)>/g)?.length).toBe(opened);
  });
});
