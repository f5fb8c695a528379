/**
 * What `engine init` scaffolds, as data: each directory and file with its contents. Pure, so the
 * contents are tested without a disk; init-project.ts writes the plan without overwriting.
 */
import { parseDispatchTable, type DispatchTable } from '../dispatch/dispatch-table.js';
import { CLAUDE_CODE_COMMANDS } from './claude-builtins.js';
import { SESSION_FILES } from '../sessions/session-dir.js';
import {
  COMMENT_KEY,
  ENGINE_JSON,
  SETTING_NAMES,
  SETTINGS,
  typedDefaults,
} from '../settings/setting-table.js';

export type InitEntry =
  { kind: 'dir'; path: string } | { kind: 'file'; path: string; content: string };

export interface InitPlan {
  entries: InitEntry[];
  /** Skills of the table that get no command, each with the reason. */
  skipped: { skill: string; reason: string }[];
}

export const TAGS_MD = 'directives/TAGS.md';
export const ENGINE_MD = 'directives/ENGINE.md';
export const COMMANDS_DIR = '.claude/commands';

/** A skill that is a plain command name, so its file name cannot leave .claude/commands/. */
const COMMAND_SKILL = /^\/([A-Za-z0-9][A-Za-z0-9_-]*)$/;

/**
 * The plan for a project whose `directives/TAGS.md` holds `projectTags` (null: none yet, so the
 * shipped table is written and used). Commands are made for the table that will be in force.
 */
export function planInit(input: {
  shippedTags: string;
  shippedTagsPath: string;
  projectTags: string | null;
  projectTagsPath: string;
  /** Claims run in git worktrees: the commands tell the agent to commit on its branch. */
  worktree: boolean;
}): InitPlan {
  const table =
    input.projectTags === null
      ? parseDispatchTable(input.shippedTags, input.shippedTagsPath)
      : parseDispatchTable(input.projectTags, input.projectTagsPath);
  const { commands, skipped } = skillCommands(table, input.worktree);
  return {
    entries: [
      { kind: 'file', path: TAGS_MD, content: input.shippedTags },
      { kind: 'file', path: ENGINE_JSON, content: engineJson(input.worktree) },
      { kind: 'file', path: ENGINE_MD, content: engineMd() },
      { kind: 'dir', path: 'sessions' },
      ...commands,
    ],
    skipped,
  };
}

/** Every setting at its default (worktree as asked), with a note where each is described. */
export function engineJson(worktree: boolean): string {
  const json = {
    [COMMENT_KEY]:
      'Settings of `engine run`, each at its default; directives/ENGINE.md describes each one. A command-line flag, then an environment variable, overrides a value here.',
    ...typedDefaults(),
    ...(worktree ? { worktree: true } : {}),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

/** The description of engine.json, from the same table the daemon reads it with. */
export function engineMd(): string {
  const rows = SETTING_NAMES.map((name) => {
    const setting = SETTINGS[name];
    return `| \`${setting.key}\` | \`${JSON.stringify(setting.default)}\` | \`--${setting.flag}\` | \`${setting.env}\` | ${setting.describe}: ${setting.expected} |`;
  });
  return [
    '# engine.json',
    '',
    '`directives/engine.json` holds the settings of `engine run --monitor-tags` (the dispatch',
    'daemon). Each setting comes from the first of: its command-line flag, its environment variable,',
    'engine.json, its default. A key engine does not know, or a value it does',
    'not accept, stops the daemon with an error naming the file and the key; `$comment` is a note',
    'and is not read. Written by `engine init`; edit it freely.',
    '',
    '| Key | Default | Flag | Environment | Meaning: value |',
    '|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/**
 * One command file per dispatchable skill: `/fix` is `.claude/commands/fix.md`. None for a name
 * Claude Code has a command of its own for: that one would run instead.
 */
function skillCommands(
  table: DispatchTable,
  worktree: boolean,
): {
  commands: InitEntry[];
  skipped: InitPlan['skipped'];
} {
  const nouns = new Map<string, string[]>();
  for (const route of table.values()) {
    if (!route.dispatchable) continue;
    nouns.set(route.skill, [...(nouns.get(route.skill) ?? []), route.noun]);
  }
  const commands: InitEntry[] = [];
  const skipped: InitPlan['skipped'] = [];
  for (const [skill, skillNouns] of nouns) {
    const name = COMMAND_SKILL.exec(skill)?.[1];
    if (name === undefined) {
      skipped.push({
        skill,
        reason: 'not a plain command name such as /fix (letters, digits, - and _)',
      });
      continue;
    }
    if (CLAUDE_CODE_COMMANDS.has(name.toLowerCase())) {
      skipped.push({
        skill,
        reason: `Claude Code has a built-in /${name}, which would run instead: rename the skill in ${TAGS_MD}`,
      });
      continue;
    }
    commands.push({
      kind: 'file',
      path: `${COMMANDS_DIR}/${name}.md`,
      content: skillCommand(skill, skillNouns, worktree),
    });
  }
  return { commands, skipped };
}

/**
 * With worktrees, the agent works on its own branch in its own worktree; a branch left without a
 * commit is an empty branch, and the work is lost when the worktree is pruned.
 */
const COMMIT_STEP = `5. **Commit your work** on your branch, in your working directory (a git worktree of its own,
   on the branch \`engine/<noun>/<slug>\`; check with \`git status\` and \`git branch --show-current\`):
   \`git add\` the files you changed and \`git commit\` with a message saying what was done. Do not
   switch branches, push or merge. The request file is not in your worktree: do not copy it there.
`;

/** The protocol an agent started by engine follows, as a Claude Code custom command. */
export function skillCommand(skill: string, nouns: string[], worktree: boolean): string {
  const one = nouns.length === 1 ? (nouns[0] as string) : null;
  const claimed = one === null ? '#claimed-X' : `#claimed-${one}`;
  const done = one === null ? '#done-X' : `#done-${one}`;
  const which =
    one === null
      ? ` X is the item's noun: \`$ENGINE_NOUN\` (one of ${nouns.map((n) => `\`${n}\``).join(', ')}), the one on the Tags line as \`#claimed-X\`.`
      : '';
  const swap =
    one === null
      ? `engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN"`
      : `engine tag swap "$ENGINE_REQUEST_FILE" '${claimed}' '${done}'`;
  // No `#` in the front matter: after a space, YAML reads it as the start of a comment.
  return `---
description: Work on an engine request claimed for ${nouns.join(' or ')}, then mark it done
argument-hint: <request-file>
---

# ${skill}

Work on one engine request: a markdown file whose Tags line carries \`${claimed}\`. engine (the
dispatch daemon) claimed it for you and waits for the tag to become \`${done}\`.${which} Follow
these steps in order.

1. **Find the request file.** It is \`$ENGINE_REQUEST_FILE\` when engine started you (check with
   \`echo "$ENGINE_REQUEST_FILE"\`), else the path given to this command: $ARGUMENTS
   If the file \`$ENGINE_SESSION_DIR/${SESSION_FILES.requestFile}\` exists, the request was moved while you
   worked: that file holds its path now. Use that path everywhere below.
2. **A retry?** If \`$ENGINE_ATTEMPT\` is 2 or more, an earlier attempt did not finish. First read
   the prior session, the directory \`$ENGINE_PRIOR_SESSION\` (its \`${SESSION_FILES.state}\`, and its
   \`${SESSION_FILES.agentLog}\` where there is one), and the \`## Recovery\` notes in the request file; do not
   repeat what went wrong.
3. **Do the work** the request file asks for.
4. **Respond.** Append a \`## Response\` section at the end of the request file saying what was
   done and where (files, commits, documents). Leave its Tags line and its \`**Session**:\` line
   as they are.
${worktree ? COMMIT_STEP : ''}${worktree ? 6 : 5}. **Mark it done**, as the very last step:

       ${swap}

   Give the request file's path instead of \`"$ENGINE_REQUEST_FILE"\` when it moved, or when
   engine did not start you. If the swap fails, the file no longer carries \`${claimed}\`
   (someone changed it): do not force the tag, and say so in your reply.
`;
}
