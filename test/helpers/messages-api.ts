/**
 * A local stand-in for the Anthropic Messages API, for the tests that drive the real Claude Code
 * CLI (test/claude/). Each test scripts a queue of replies; each `POST /v1/messages` takes the
 * next one. It speaks the streaming events the CLI expects (message_start, content_block_start,
 * content_block_delta, content_block_stop, message_delta, message_stop) and records every request
 * body, so a test can assert on the conversation the CLI sent.
 *
 * Listens on 127.0.0.1 only, on a free port; `close()` ends every open connection with it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type Reply =
  /** A text answer that ends the turn (`end_turn`). */
  | { kind: 'text'; text: string }
  /**
   * A `tool_use` of Bash: the CLI runs the command, then sends a follow-up whose last user message
   * holds the `tool_result`, which takes the next reply.
   */
  | { kind: 'bash'; command: string }
  /** A `tool_use` of any tool, e.g. `Write` with `{file_path, content}`. */
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  /** HTTP 429 with the headers and body of a usage limit (`anthropic-ratelimit-unified-*`). */
  | { kind: 'rate-limit'; resetAt: number }
  /** Holds the request open until `release()` or `close()`. */
  | { kind: 'hang' }
  /** Picks the reply from the request itself: for agents whose requests interleave. */
  | { kind: 'pick'; pick: (body: MessagesBody) => Reply };

export const reply = {
  text: (text: string): Reply => ({ kind: 'text', text }),
  bash: (command: string): Reply => ({ kind: 'bash', command }),
  tool: (name: string, input: Record<string, unknown>): Reply => ({ kind: 'tool', name, input }),
  /** A limit that resets in an hour unless told otherwise (epoch seconds). */
  rateLimit: (resetAt = Math.floor(Date.now() / 1000) + 3600): Reply => ({
    kind: 'rate-limit',
    resetAt,
  }),
  hang: (): Reply => ({ kind: 'hang' }),
  pick: (pick: (body: MessagesBody) => Reply): Reply => ({ kind: 'pick', pick }),
  /**
   * An agent that marks its item done: the Bash swap of `#claimed-X` to `#done-X` for a prompt,
   * a closing text for the follow-up that carries the tool result.
   */
  markDone: (): Reply =>
    reply.pick((body) =>
      lastUserContent(body).some((b) => b.type === 'tool_result')
        ? reply.text('Marked it done.')
        : reply.bash(
            'engine tag swap "$ENGINE_REQUEST_FILE" "#claimed-$ENGINE_NOUN" "#done-$ENGINE_NOUN"',
          ),
    ),
};

/** What a request that found the queue empty is answered with; the test sees it in `unscripted`. */
const UNSCRIPTED_TEXT = 'The stand-in had no scripted reply for this request.';

export interface RecordedRequest {
  method: string;
  /** The path with its query, e.g. `/v1/messages?beta=true`. */
  url: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body, or the raw text when it is not JSON. */
  body: unknown;
  /** The reply it got (`hang` while held); null for a request to another path. */
  reply: Reply | null;
}

/** The fields of a Messages request the tests read. */
export interface MessagesBody {
  model: string;
  stream?: boolean;
  /** The CLI also puts a `system` entry among them (its environment), after the user's prompt. */
  messages: { role: 'user' | 'assistant' | 'system'; content: string | ContentBlock[] }[];
  [field: string]: unknown;
}

export interface ContentBlock {
  type: string;
  text?: string;
  tool_use_id?: string;
  content?: unknown;
  [field: string]: unknown;
}

interface Held {
  record: RecordedRequest;
  body: MessagesBody;
  res: ServerResponse;
}

const isMessages = (req: { method?: string; url?: string }): boolean =>
  req.method === 'POST' && (req.url ?? '').split('?')[0] === '/v1/messages';

export class MessagesApi {
  /** Every request, in the order they came. */
  readonly requests: RecordedRequest[] = [];
  /** The Messages requests that found the queue empty. */
  readonly unscripted: RecordedRequest[] = [];
  private readonly queue: Reply[] = [];
  private readonly held: Held[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly server: Server = createServer((req, res) =>
    // A client that hung up mid-request (a killed CLI) has nothing left to answer.
    this.handle(req, res).catch(() => res.destroy()),
  );

  private constructor() {
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts a stand-in on a free port of 127.0.0.1. */
  static async start(): Promise<MessagesApi> {
    const api = new MessagesApi();
    await new Promise<void>((resolve, reject) => {
      api.server.once('error', reject);
      api.server.listen(0, '127.0.0.1', () => resolve());
    });
    return api;
  }

  get port(): number {
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
    return address.port;
  }

  /** For ANTHROPIC_BASE_URL. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Appends replies to the queue; each Messages request takes the first. */
  script(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** The bodies of the Messages requests so far, in order. */
  messages(): MessagesBody[] {
    return this.requests.filter((r) => isMessages(r)).map((r) => r.body as MessagesBody);
  }

  /** How many requests a hang holds open now. */
  get heldCount(): number {
    return this.held.length;
  }

  /** Answers every held request with `answer` (a text reply by default). */
  release(answer: Reply = reply.text('Released.')): void {
    for (const h of this.held.splice(0)) this.answer(h.record, h.body, h.res, answer);
  }

  /** Stops listening and ends every open connection, held requests included. */
  async close(): Promise<void> {
    this.held.length = 0;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: recorded as text
    }
    const record: RecordedRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body,
      reply: null,
    };
    this.requests.push(record);
    if (!isMessages(req)) {
      sendJson(res, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `The stand-in serves only POST /v1/messages` },
      });
      return;
    }
    const next = this.queue.shift();
    if (next === undefined) this.unscripted.push(record);
    this.answer(record, body as MessagesBody, res, next ?? reply.text(UNSCRIPTED_TEXT));
  }

  private answer(record: RecordedRequest, body: MessagesBody, res: ServerResponse, given: Reply) {
    // A pick names a plain reply (never another pick).
    const answer = (given.kind === 'pick' ? given.pick(body) : given) as Exclude<
      Reply,
      { kind: 'pick' }
    >;
    record.reply = answer;
    if (answer.kind === 'hang') {
      const held = { record, body, res };
      this.held.push(held);
      // A client that gave up (a killed CLI) is no longer held.
      res.on('close', () => {
        const at = this.held.indexOf(held);
        if (at !== -1) this.held.splice(at, 1);
      });
      return;
    }
    if (answer.kind === 'rate-limit') {
      sendJson(
        res,
        429,
        {
          type: 'error',
          error: { type: 'rate_limit_error', message: 'Usage limit reached' },
        },
        {
          'anthropic-ratelimit-unified-status': 'rejected',
          'anthropic-ratelimit-unified-reset': String(answer.resetAt),
          'anthropic-ratelimit-unified-representative-claim': 'five_hour',
          'retry-after': String(Math.max(0, answer.resetAt - Math.floor(Date.now() / 1000))),
        },
      );
      return;
    }
    const id = `msg_standin_${randomBytes(8).toString('hex')}`;
    const block: ContentBlock =
      answer.kind === 'text'
        ? { type: 'text', text: answer.text }
        : {
            type: 'tool_use',
            id: `toolu_standin_${randomBytes(8).toString('hex')}`,
            name: answer.kind === 'tool' ? answer.name : 'Bash',
            input: answer.kind === 'tool' ? answer.input : { command: answer.command },
          };
    const stopReason = answer.kind === 'text' ? 'end_turn' : 'tool_use';
    const usage = {
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    if (body.stream !== true) {
      sendJson(res, 200, {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [block],
        stop_reason: stopReason,
        stop_sequence: null,
        usage,
      });
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': `req_standin_${randomBytes(8).toString('hex')}`,
    });
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    if (block.type === 'text') {
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
    } else {
      event('content_block_start', { index: 0, content_block: { ...block, input: {} } });
      event('content_block_delta', {
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    event('content_block_stop', { index: 0 });
    event('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    event('message_stop', {});
    res.end();
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The text of a message's content: its text blocks joined, tool results included. */
export function contentText(content: string | ContentBlock[]): string {
  if (typeof content === 'string') return content;
  return content
    .map((block) => {
      if (typeof block.text === 'string') return block.text;
      if (typeof block.content === 'string') return block.content;
      if (Array.isArray(block.content)) return contentText(block.content as ContentBlock[]);
      return '';
    })
    .join('\n');
}

/** The content of the last user message of a request: the prompt, or the latest tool results. */
export function lastUserContent(body: MessagesBody): ContentBlock[] {
  const message = body.messages.findLast((m) => m.role === 'user');
  if (message === undefined) return [];
  return typeof message.content === 'string'
    ? [{ type: 'text', text: message.content }]
    : message.content;
}
