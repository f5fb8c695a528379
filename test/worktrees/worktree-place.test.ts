import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { worktreePlace } from '../../src/worktrees/worktree.js';
import { worktreeLine, worktreeLineEdit } from '../../src/worktrees/worktree-line.js';

const ROOT = '/r';

describe('worktreePlace', () => {
  it.each([
    'sessions/fix-login.md',
    "sessions/$(touch pwned) 'x' `y`.md",
    'sessions/--upload-pack=evil.md',
    'sessions/-b main.md',
    'sessions/..lock.md',
    'sessions/ü日本語.md',
    `sessions/${'long-'.repeat(100)}.md`,
    'sessions/.md',
  ])('gives %j a safe, bounded branch under engine/<noun>/ and a path under the root', (name) => {
    const place = worktreePlace(ROOT, 'fix', `${ROOT}/${name}`);
    const slug = place.branch.slice('engine/fix/'.length);
    expect(place.branch.startsWith('engine/fix/')).toBe(true);
    expect(slug).toMatch(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/);
    expect(slug.length).toBeLessThanOrEqual(40 + 1 + 8);
    expect(place.path).toBe(`${ROOT}/.engine-worktrees/fix/${slug}`);
    // git itself takes it as a branch name.
    execFileSync('git', ['check-ref-format', '--branch', place.branch]);
  });

  it('is the same for every attempt, and differs for one name in two directories', () => {
    const a = worktreePlace(ROOT, 'fix', '/r/sessions/a/fix.md');
    expect(worktreePlace(ROOT, 'fix', '/r/sessions/a/fix.md')).toEqual(a);
    expect(worktreePlace(ROOT, 'fix', '/r/sessions/b/fix.md').branch).not.toBe(a.branch);
    expect(worktreePlace(ROOT, 'review', '/r/sessions/a/fix.md').branch).toMatch(
      /^engine\/review\//,
    );
  });
});

describe('the Worktree line', () => {
  const place = { path: '/r/.engine-worktrees/fix/x-12345678', branch: 'engine/fix/x-12345678' };
  const line = worktreeLine(place);

  it('goes below the Session line, once, and changes no tag', () => {
    const text = '# X\n**Tags**: #done-fix\n**Session**: sessions/s1\n\nBody.\n';
    const named = worktreeLineEdit(text, place) as string;
    expect(named).toBe(`# X\n**Tags**: #done-fix\n**Session**: sessions/s1\n${line}\n\nBody.\n`);
    expect(worktreeLineEdit(named, place)).toBeNull();
  });

  it("leaves another branch's line alone (another noun's, or a human's): each branch has its own", () => {
    const research = worktreeLine({
      path: '/r/.engine-worktrees/research/x',
      branch: 'engine/research/x',
    });
    const text = `# X\n**Tags**: #done-research #done-fix\n**Session**: sessions/s1\n${research}\n\nBody.\n`;
    const named = worktreeLineEdit(text, place) as string;
    expect(named).toContain(research);
    expect(named).toContain(line);
  });

  it('goes below the front matter when there is no Session or Tags line, never into an open block', () => {
    const text = '---\ntags: [done-fix]\n---\n```sh\necho hi\n';
    const named = worktreeLineEdit(text, place) as string;
    expect(named).toBe(`---\ntags: [done-fix]\n---\n${line}\n\n\`\`\`sh\necho hi\n`);
  });

  it('never reads or changes a Worktree line inside code', () => {
    const fenced = '# X\n**Tags**: #done-fix\n\n```\n' + line + '\n```\n';
    const named = worktreeLineEdit(fenced, place) as string;
    expect(named).toBe(`# X\n**Tags**: #done-fix\n${line}\n\n\`\`\`\n${line}\n\`\`\`\n`);
  });
});
