// The board's page: no framework, no build. Data is shown with textContent only, never parsed as
// HTML. The token comes from the URL fragment (never sent to the server by the browser), is kept
// in memory, and the fragment is cleared from the address bar and history at once.
'use strict';

const token = new URLSearchParams(location.hash.slice(1)).get('token');
history.replaceState(null, '', location.pathname + location.search);

const $ = (id) => document.getElementById(id);

/** An element with text (as text), a class and attributes. */
function el(tag, text, attributes) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [name, value] of Object.entries(attributes ?? {})) node.setAttribute(name, value);
  return node;
}

function api(path, init) {
  const headers = { Authorization: `Bearer ${token}` };
  return fetch(path, { ...init, headers, cache: 'no-store', credentials: 'omit' });
}

function say(text, ok) {
  const answer = $('answer');
  answer.hidden = false;
  answer.textContent = `${ok ? 'Done' : 'Not done'}: ${text}`;
  answer.className = ok ? 'ok' : 'refused';
}

let loading = null;
let again = false;

/** Fetches the board and shows it; asked while a fetch runs, fetches once more after it. */
async function load() {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    do {
      again = false;
      const res = await api('/api/board');
      const body = await res.json();
      if (!res.ok) throw new Error(body.message);
      render(body);
    } while (again);
  })()
    .catch((error) => setConnection(`Cannot read the board: ${error.message}`))
    .finally(() => (loading = null));
  return loading;
}

function setConnection(text) {
  $('connection').textContent = text;
}

function render(board) {
  $('project').textContent = `Project ${board.root}${board.readOnly ? ' (read-only)' : ''}`;
  $('daemon').textContent = board.daemon;
  $('source').textContent = `This board: ${board.source}`;
  $('pause').hidden = board.paused === null;
  $('pause-text').textContent = board.paused ?? '';
  const pause = $('pause');
  pause.querySelector('.actions')?.remove();
  if (board.resume)
    pause.append(
      actionsOf([{ label: 'Resume the queue', command: board.resume }], () => '/api/resume'),
    );
  const lanes = board.lanes.map(laneOf);
  $('lanes').replaceChildren(...lanes);
  renderHosts(board.hosts ?? null);
}

/** Every host's claims (git claims only; absent in local mode, and the section stays hidden). */
function renderHosts(hosts) {
  $('hosts').hidden = hosts === null;
  if (hosts === null) return;
  $('hosts-title').textContent = hosts.title;
  $('hosts-fetched').textContent = hosts.fetched;
  $('hosts-error').hidden = hosts.error === null;
  $('hosts-error').textContent = hosts.error ?? '';
  const columns = ['host', 'item', 'file', 'noun', 'state', 'attempt', 'lease', 'renewed'];
  const rows = hosts.claims.map((claim) => {
    const row = el('tr', null, { 'data-item': claim.item });
    for (const column of columns) row.append(el('td', claim[column]));
    return row;
  });
  if (rows.length === 0 && hosts.error === null) {
    const none = el('td', 'No claims.', { colspan: String(columns.length) });
    rows.push(el('tr', null, { class: 'empty' }));
    rows[0].append(none);
  }
  $('hosts-claims').replaceChildren(...rows);
}

function laneOf(lane) {
  const section = el('section', null, {
    class: 'lane',
    'data-lane': lane.name,
    'aria-label': lane.title,
  });
  section.append(el('h2', `${lane.title} (${lane.cards.length})`));
  const list = el('ol', null, { class: 'cards' });
  if (lane.cards.length === 0) list.append(el('li', 'Nothing here.', { class: 'empty' }));
  for (const card of lane.cards) list.append(cardOf(card));
  section.append(list);
  return section;
}

function cardOf(card) {
  const item = el('li', null, {
    class: 'card',
    'data-id': card.id,
    'data-file': card.file,
    'data-noun': card.noun,
  });
  item.append(el('h3', card.title));
  const facts = [card.file, card.tag, card.priority].filter((x) => x !== null).join(' · ');
  item.append(el('p', facts, { class: 'facts' }));
  const state = el('p', null, { class: 'state' });
  state.append(el('strong', 'State: '), document.createTextNode(card.state));
  item.append(state);
  if (card.why) item.append(el('p', card.why, { class: 'why' }));
  for (const detail of card.details) item.append(el('p', detail, { class: 'detail' }));
  if (card.dependencies.length > 0)
    item.append(el('p', `Depends on: ${card.dependencies.join(', ')}`, { class: 'detail' }));
  if (card.tail) {
    const tail = el('details', null, { class: 'tail' });
    tail.append(el('summary', 'Transcript tail'), el('pre', card.tail));
    item.append(tail);
  }
  if (card.attach) item.append(copyable(card.attach));
  if (card.actions.length > 0)
    item.append(actionsOf(card.actions, (a) => `/api/items/${card.id}/${a.name}`));
  return item;
}

/** A command to copy: shown as text, with a button that copies it. */
function copyable(command) {
  const row = el('p', null, { class: 'copy' });
  const button = el('button', 'Copy', { type: 'button', 'aria-label': `Copy ${command}` });
  button.addEventListener('click', () =>
    navigator.clipboard.writeText(command).then(
      () => (button.textContent = 'Copied'),
      () => (button.textContent = 'Select the text to copy'),
    ),
  );
  row.append(el('code', command), button);
  return row;
}

/** The buttons of the actions, each with the CLI command it equals. */
function actionsOf(actions, pathOf) {
  const list = el('ul', null, { class: 'actions' });
  for (const action of actions) {
    const entry = el('li');
    const button = el('button', action.label, {
      type: 'button',
      'data-action': action.name ?? 'resume',
    });
    button.addEventListener('click', () => act(button, pathOf(action)));
    entry.append(button, el('code', action.command, { class: 'command' }));
    list.append(entry);
  }
  return list;
}

async function act(button, path) {
  button.disabled = true;
  try {
    const res = await api(path, { method: 'POST' });
    const body = await res.json();
    say(body.message, res.ok);
  } catch (error) {
    say(error.message, false);
  } finally {
    button.disabled = false;
    await load();
  }
}

/** The event stream, read with fetch (EventSource cannot send the token): each `changed` refetches. */
async function listen() {
  for (;;) {
    try {
      const res = await api('/api/events');
      // A board started again has a new token: this page's will never work again.
      if (res.status === 401) return setConnection((await res.json()).message);
      if (!res.ok) throw new Error((await res.json()).message);
      setConnection('Live: updates as the files change.');
      await load();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const events = buffer.split('\n\n');
        buffer = events.pop();
        if (events.some((e) => e.split('\n').includes('event: changed'))) void load();
      }
      setConnection('Disconnected: reconnecting…');
    } catch (error) {
      setConnection(`Disconnected (${error.message}): reconnecting…`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

if (token === null) {
  setConnection('No token: open the URL engine printed (it ends with #token=…).');
} else {
  void listen();
  // Relative times ("3 min ago") stay true without a change.
  setInterval(() => void load(), 30_000);
}
