// nnsweeper's page: play, and see the exact engine's and the networks' P(mine) cell by cell.
// Plain script, no build step, nothing fetched but this server's own endpoints.
"use strict";

const $ = (id) => document.getElementById(id);
const PRESETS = { beginner: [9, 9, 10], intermediate: [16, 16, 40], expert: [16, 30, 99] };
const DEFAULT_KEYS = { reveal: " ", flag: "f", undo: "u", hint: "h", auto: "a", new: "n", replay: "r" };
const LONG_PRESS_MS = 400;

const game = {
  rows: 0, cols: 0, mines: 0, rule: "safe", seed: 0,
  mine: null,        // Uint8Array of the layout, placed at the first click (the server's draw)
  bbbv: 0,           // the layout's 3BV, as the server counts it
  grid: null,        // Int8Array: -1 covered, 0..8 revealed
  flags: null,       // Uint8Array
  over: null,        // null, "won" or "lost"
  boom: -1,          // the mine that ended a lost game
  started: 0, ended: 0,
  history: [],       // snapshots for undo
};
let cells = [];      // the board's elements, row-major
let hover = -1;      // the cell under the pointer (for the keys)
let overlay = null;  // AbortController of the overlay's request in flight
let autoplay = null; // the auto player's timer, or null
let keys = loadKeys();
let info = null;

// ------------------------------------------------------------------ requests
async function api(path, body, signal) {
  const response = await fetch(`/api/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  const data = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
  return data;
}

function say(text) { $("message").textContent = text || ""; }

// ------------------------------------------------------------------ the game
function boardText() {
  const lines = [];
  for (let i = 0; i < game.rows; i++) {
    let line = "";
    for (let j = 0; j < game.cols; j++) {
      const k = i * game.cols + j;
      line += game.grid[k] >= 0 ? String(game.grid[k]) : game.flags[k] ? "F" : ".";
    }
    lines.push(line);
  }
  return lines.join("\n");
}

function neighbours(k) {
  const i = Math.floor(k / game.cols), j = k % game.cols, out = [];
  for (let di = -1; di <= 1; di++) for (let dj = -1; dj <= 1; dj++) {
    const x = i + di, y = j + dj;
    if ((di || dj) && x >= 0 && y >= 0 && x < game.rows && y < game.cols) out.push(x * game.cols + y);
  }
  return out;
}

function count(k) { return neighbours(k).reduce((n, q) => n + game.mine[q], 0); }

function newGame(seed) {
  stopAuto();
  const preset = $("preset").value;
  const [rows, cols, mines] = preset === "custom"
    ? [+$("rows").value, +$("cols").value, +$("mines").value] : PRESETS[preset];
  Object.assign(game, { rows, cols, mines, rule: $("rule").value, seed: seed ?? +$("seed").value,
                        mine: null, bbbv: 0, over: null, boom: -1, started: 0, ended: 0, history: [] });
  game.grid = new Int8Array(rows * cols).fill(-1);
  game.flags = new Uint8Array(rows * cols);
  $("seed").value = game.seed;
  say("");
  $("reason").textContent = "";
  build();
  refresh();
}

function snapshot() {
  game.history.push({ grid: game.grid.slice(), flags: game.flags.slice(), over: game.over, boom: game.boom,
                      ended: game.ended });
  if (game.history.length > 10000) game.history.shift();
}

function undo() {
  const last = game.history.pop();
  if (!last) return;
  Object.assign(game, last);
  refresh();
}

async function reveal(k) {
  if (mode === "analyse") return;
  if (game.over || game.grid[k] >= 0 || game.flags[k]) return;
  if (game.mine === null) {
    try {
      const placed = await api("layout", { rows: game.rows, cols: game.cols, mines: game.mines,
        first_click: game.rule, seed: game.seed, click: [Math.floor(k / game.cols), k % game.cols] });
      game.mine = new Uint8Array(game.rows * game.cols);
      for (const q of placed.mines) game.mine[q] = 1;
      game.bbbv = placed["3bv"];  // the clicks a perfect player needs (grading's count)
      game.started = performance.now();
      if (game.rule.startsWith("no-guess")) say("a certified no-guess board: proven-safe moves alone win it from this click");
    } catch (e) { say(e.message); return; }
  }
  snapshot();
  open([k]);
  refresh();
}

function open(start) {
  const stack = [...start];
  while (stack.length) {
    const k = stack.pop();
    if (game.grid[k] >= 0 || game.flags[k]) continue;
    if (game.mine[k]) { game.over = "lost"; game.boom = k; game.ended = performance.now(); return; }
    game.grid[k] = count(k);
    if (game.grid[k] === 0) stack.push(...neighbours(k));
  }
  const covered = game.grid.reduce((n, v) => n + (v < 0), 0);
  if (covered === game.mines) { game.over = "won"; game.ended = performance.now(); }
}

function chord(k) {
  if (game.over || game.grid[k] <= 0) return;
  const around = neighbours(k);
  const flagged = around.filter((q) => game.flags[q]).length;
  const closed = around.filter((q) => game.grid[q] < 0 && !game.flags[q]);
  if (flagged !== game.grid[k] || !closed.length) return;
  snapshot();
  open(closed);
  refresh();
}

function flag(k) {
  if (mode === "review") return;
  if (mode === "analyse") return edit(k, game.grid[k] >= 0 ? -1 : "flag");
  if (game.over || game.grid[k] >= 0) return;
  snapshot();
  game.flags[k] ^= 1;
  refresh();
}

// ------------------------------------------------------------------ drawing
function build() {
  const board = $("board");
  board.style.gridTemplateColumns = `repeat(${game.cols}, var(--cell))`;
  // Cells fit the window's width down to 20 px (a phone shows expert's 30 columns whole); below
  // that the board scrolls.
  board.style.setProperty("--cell", `max(20px, min(28px, calc((100vw - 2.5rem) / ${game.cols})))`);
  board.replaceChildren();
  cells = [];
  for (let k = 0; k < game.rows * game.cols; k++) {
    const el = document.createElement("div");
    el.className = "cell";
    el.dataset.k = k;
    el.setAttribute("role", "gridcell");
    board.appendChild(el);
    cells.push(el);
  }
}

function draw() {
  for (let k = 0; k < cells.length; k++) {
    const el = cells[k], v = game.grid[k];
    let cls = "cell", text = "";
    if (v >= 0) { cls += " open"; if (v > 0) { cls += ` n${v}`; text = String(v); } }
    else if (game.over && game.mine && game.mine[k]) cls += k === game.boom ? " boom mine" : game.flags[k] ? " flag" : " mine";
    else if (game.flags[k]) cls += game.over === "lost" && !game.mine[k] ? " wrong" : " flag";
    el.className = cls;
    el.textContent = text;
    el.style.backgroundColor = "";
    el.title = "";
  }
  const flagged = game.flags.reduce((n, f) => n + f, 0);
  $("left").textContent = game.mines - flagged;
  let result = "";
  if (game.over === "won") {
    const seconds = (game.ended - game.started) / 1000, b = game.bbbv;
    result = `won: 3BV ${b}, ${seconds.toFixed(2)} s, 3BV/s ${(b / Math.max(seconds, 1e-3)).toFixed(2)}`;
  } else if (game.over === "lost") result = "lost";
  $("result").textContent = result;
}

function refresh() {
  draw();
  updateOverlay();
}

function tick() {
  const t = game.started ? ((game.ended || performance.now()) - game.started) / 1000 : 0;
  $("time").textContent = Math.floor(t);
}
setInterval(tick, 250);

// ------------------------------------------------------------------ the overlay
async function updateOverlay() {
  if (overlay) overlay.abort();  // the board changed: the answer in flight is for another one
  const source = $("source").value;
  if (source === "none" || game.over) return;
  const controller = overlay = new AbortController();
  const body = { board: boardText(), mines: game.mines };
  try {
    let p;
    if (source.endsWith("-exact")) {
      const [net, exact] = await Promise.all([
        api("predict", { ...body, model: source.slice(0, -6) }, controller.signal),
        api("analyze", body, controller.signal)]);
      p = net.probabilities.map((row, i) => row.map((v, j) => v === null ? null : v - exact.probabilities[i][j]));
    } else if (source === "exact") {
      p = (await api("analyze", body, controller.signal)).probabilities;
    } else {
      p = (await api("predict", { ...body, model: source }, controller.signal)).probabilities;
    }
    if (controller.signal.aborted) return;
    paint(p, source);
  } catch (e) {
    if (e.name !== "AbortError") say(e.message);
  }
}

// What the overlay's numbers are, beside its choice.
function legend() {
  const source = $("source").value;
  $("legend").textContent = source === "none" ? "" : source.endsWith("-exact")
    ? "numbers: the network's P(mine) minus the exact one, in points; red likelier, blue less likely"
    : "numbers: P(mine) in %; 0 proven safe, M proven mine";
}

function paint(p, source) {
  const diff = source.endsWith("-exact");
  for (let i = 0; i < game.rows; i++) for (let j = 0; j < game.cols; j++) {
    const k = i * game.cols + j, v = p[i][j], el = cells[k];
    if (v === null || game.flags[k] || game.grid[k] >= 0) continue;
    const span = document.createElement("span");
    span.className = "p";
    span.textContent = diff ? (100 * v).toFixed(0) : v === 0 ? "0" : v === 1 ? "M" : (100 * v).toFixed(v < 0.1 ? 1 : 0);
    el.replaceChildren(span);
    el.title = diff ? `network - exact: ${v.toFixed(4)}` : `P(mine) = ${v}`;
    if (!diff && source === "exact") {
      if (v === 0) el.classList.add("safe");
      if (v === 1) el.classList.add("mine-proven");
    }
    // Risk from green (safe) through yellow (a fifth) to red (a half and more); a difference in
    // red (the network says likelier) or blue (less likely), deeper the larger.
    el.style.backgroundColor = diff ? `hsl(${v > 0 ? 0 : 220} 70% ${100 - 35 * Math.min(Math.abs(v) * 4, 1)}%)`
                                    : `hsl(${120 - 240 * Math.min(v, 0.5)} 65% ${80 - 10 * Math.min(v, 0.5)}%)`;
  }
}

// ------------------------------------------------------------------ solvers
// Every solver's next move at once (the "every solver" choice), as nnsweeper analyze lists them.
async function hintAll() {
  const body = { board: boardText(), mines: game.mines, seed: game.seed };
  cells.forEach((el) => el.classList.remove("hint"));
  candidates([]);
  const answers = await Promise.all(info.solvers.map((solver) =>
    api("suggest", { ...body, solver }).catch((e) => ({ solver, error: e.message }))));
  $("reason").textContent = answers.map((s) => s.error ? `${s.solver}: ${s.error}`
    : s.cell ? `${s.solver} (${s.cell[0]}, ${s.cell[1]}): ${s.reason}` : `${s.solver}: ${s.reason}`).join("\n");
  for (const s of answers) if (s.cell) cells[s.cell[0] * game.cols + s.cell[1]].classList.add("hint");
  return null;
}

async function hint() {
  if (game.over) return null;
  if ($("solver").value === "every solver") return hintAll();
  try {
    const s = await api("suggest", { board: boardText(), mines: game.mines, solver: $("solver").value,
                                     seed: game.seed });
    cells.forEach((el) => el.classList.remove("hint"));
    candidates([]);
    if (!s.cell) { $("reason").textContent = s.reason; return null; }
    const k = s.cell[0] * game.cols + s.cell[1];
    cells[k].classList.add("hint");
    $("reason").textContent = `${s.solver} (${s.cell[0]}, ${s.cell[1]}): ${s.reason}`;
    candidates(s.candidates || []);
    return s;
  } catch (e) { say(e.message); return null; }
}

// The look-ahead's candidates, best first: what the solver weighed before its guess.
function candidates(list) {
  const table = $("candidates");
  table.replaceChildren();
  table.hidden = !list.length;
  if (!list.length) return;
  const head = table.createTHead().insertRow();
  for (const h of ["cell", "P(mine)", "P(it and the next are safe)", "P(progress)", ""]) {
    head.appendChild(document.createElement("th")).textContent = h;
  }
  const body = table.createTBody();
  for (const c of list.slice(0, 8)) {
    const row = body.insertRow();
    for (const v of [`(${c.cell[0]}, ${c.cell[1]})`, c.probability.toFixed(4), c.score.toFixed(4),
                     c.progress.toFixed(4), c.dead ? "dead: one number in every layout" : ""]) {
      row.insertCell().textContent = v;
    }
  }
  if (list.length > 8) body.insertRow().insertCell().textContent = `... ${list.length - 8} more`;
}

async function step() {
  if ($("solver").value === "every solver") return stopAuto();
  const s = await hint();
  if (!s || !s.cell || autoplay === null) return stopAuto();
  for (const [i, j] of s.flags) if (!game.flags[i * game.cols + j]) flag(i * game.cols + j);
  await reveal(s.cell[0] * game.cols + s.cell[1]);
  if (game.over) return stopAuto();
  autoplay = setTimeout(step, +$("speed").value);
}

function toggleAuto() {
  if (autoplay !== null) return stopAuto();
  if (mode !== "play") return say("auto play plays games: switch to play");
  autoplay = 0;
  $("auto").textContent = "stop";
  step();
}

function stopAuto() {
  if (autoplay) clearTimeout(autoplay);
  autoplay = null;
  $("auto").textContent = "auto play";
}

// ------------------------------------------------------------------ analysing a position
// The analyser: the board is a position to set up (numbers, covered cells, flags, the mine
// count) rather than a game; the overlay and the hints work on it all the same.
let mode = "play";

function setMode(next) {
  stopAuto();
  mode = next;
  $("mode").value = next;
  document.body.classList.toggle("analyse", next === "analyse");
  document.body.classList.toggle("review", next === "review");
  $("editor").hidden = next !== "analyse";
  $("review").hidden = next !== "review";
  if (next === "review") {
    if (reviewed) showStep(+$("review-step").value);
    return;
  }
  if (next === "analyse") {
    Object.assign(game, { mine: null, over: null, boom: -1, started: 0, ended: 0 });
    $("pos-mines").value = game.mines;
  } else {
    newGame(game.seed);
  }
  refresh();
}

function setPosition(grid, flags, mines) {
  Object.assign(game, { rows: grid.length, cols: grid[0].length, mines, mine: null, over: null, boom: -1,
                        history: [] });
  game.grid = Int8Array.from(grid.flat());
  game.flags = Uint8Array.from(flags.flat().map(Number));
  $("pos-mines").value = mines;
  build();
  refresh();
}

function edit(k, value) {  // value: -1 covered, 0..8 a number, "flag" toggles a flag
  if (k < 0) return;
  snapshot();
  if (value === "flag") { game.grid[k] = -1; game.flags[k] ^= 1; }
  else { game.grid[k] = value; game.flags[k] = 0; }
  refresh();
}

function positionCode() {  // ROWSxCOLSxMINES:cells, the board text's characters row after row
  return `${game.rows}x${game.cols}x${game.mines}:${boardText().replaceAll("\n", "")}`;
}

function readPositionCode(code) {
  const m = /^(\d+)x(\d+)x(\d+):([.F0-8]+)$/.exec(code);
  if (!m) throw new Error("the address holds no position of the form ROWSxCOLSxMINES:cells");
  const [rows, cols, mines, cells] = [+m[1], +m[2], +m[3], m[4]];
  if (rows < 1 || cols < 1 || cells.length !== rows * cols) {
    throw new Error(`the address's position says ${rows}x${cols} but holds ${cells.length} cells`);
  }
  const grid = [], flags = [];
  for (let i = 0; i < rows; i++) {
    const row = cells.slice(i * cols, (i + 1) * cols);
    grid.push([...row].map((c) => (c === "." || c === "F" ? -1 : +c)));
    flags.push([...row].map((c) => c === "F"));
  }
  return { grid, flags, mines };
}

function address() { return `${location.origin}${location.pathname}#pos=${positionCode()}`; }

$("mode").addEventListener("change", () => setMode($("mode").value));
$("pos-mines").addEventListener("change", () => { game.mines = Math.max(0, +$("pos-mines").value); refresh(); });
$("copy-address").addEventListener("click", async () => {
  const url = address();
  history.replaceState(null, "", url);
  $("address").textContent = url;
  try { await navigator.clipboard.writeText(url); say("the address is copied"); } catch { say(""); }
});
$("download").addEventListener("click", () => {
  const text = boardText().split("\n").map((line) => [...line].join(" ")).join("\n") + "\n";
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  link.download = `position-${game.rows}x${game.cols}-${game.mines}.txt`;
  link.click();
  URL.revokeObjectURL(link.href);
});
$("clear").addEventListener("click", () => {
  setPosition(Array.from({ length: game.rows }, () => Array(game.cols).fill(-1)),
              Array.from({ length: game.rows }, () => Array(game.cols).fill(false)), game.mines);
});
$("load-text").addEventListener("click", async () => {
  try {
    const p = await api("parse", { text: $("paste").value });
    setPosition(p.grid, p.flags, p.mines ?? +$("pos-mines").value);
    say("");
  } catch (e) { say(e.message); }
});
$("board").addEventListener("wheel", (e) => {
  if (mode !== "analyse") return;
  const k = cellOf(e);
  if (k < 0) return;
  e.preventDefault();
  edit(k, Math.max(-1, Math.min(8, game.grid[k] + (e.deltaY < 0 ? 1 : -1))));
}, { passive: false });

// ------------------------------------------------------------------ reviewing a game
// A saved game or a player's replay, read and graded by the server; the board at any move, the
// next move outlined with its grade (its exact risk, its cost in chance of winning, the better cell).
let reviewed = null;

function pct(x) { return x === null || x === undefined ? "-" : `${(100 * x).toFixed(x < 0.001 && x > 0 ? 3 : 1)}%`; }
function at(c) { return `(${c[0]}, ${c[1]})`; }

async function openReview(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let k = 0; k < bytes.length; k += 0x8000) binary += String.fromCharCode(...bytes.subarray(k, k + 0x8000));
  say(`grading ${file.name} ...`);
  try {
    reviewed = await api("review", { name: file.name, data: btoa(binary) });
  } catch (e) { reviewed = null; say(e.message); return; }
  say("");
  const g = reviewed.grade, s = g.summary;
  Object.assign(game, { rows: reviewed.rows, cols: reviewed.cols, mines: reviewed.mines.length, history: [] });
  game.mine = new Uint8Array(game.rows * game.cols);
  for (const q of reviewed.mines) game.mine[q] = 1;
  game.grid = new Int8Array(game.rows * game.cols).fill(-1);
  game.flags = new Uint8Array(game.rows * game.cols);
  build();
  $("review-step").max = reviewed.moves.length;
  $("review-summary").textContent = `${reviewed.source}: ${s.board}, ${s.won ? "won" : "lost"} in ${s.moves} moves; `
    + `${s.guesses} guesses (${s.needless_guesses} needless), ${s.mistakes} mistakes, accuracy ${pct(s.accuracy)}, `
    + `luck ${pct(s.luck)}` + (s.biggest_loss ? `, biggest loss ${pct(s.biggest_loss.loss)} at move ${s.biggest_loss.move}` : "")
    + `; 3BV ${s["3bv"]}` + (s["3bv_per_second"] ? `, 3BV/s ${s["3bv_per_second"].toFixed(2)}` : "");
  showStep(0);
}

function showStep(step) {
  if (!reviewed) return;
  step = Math.max(0, Math.min(step, reviewed.moves.length));
  $("review-step").value = step;
  game.grid.fill(-1);
  Object.assign(game, { over: null, boom: -1 });
  for (const m of reviewed.moves.slice(0, step)) open(m.cells.map(([i, j]) => i * game.cols + j));
  refresh();
  const next = reviewed.moves[step], graded = reviewed.grade.moves[step];
  $("review-at").textContent = `move ${step} of ${reviewed.moves.length}`;
  if (!next) { $("review-move").textContent = game.over ? `the game is ${game.over}` : ""; return; }
  for (const [i, j] of next.cells) cells[i * game.cols + j].classList.add("next");
  let text = `next, move ${step + 1}: ${next.action} ${next.cells.map(at).join(" ")}`;
  if (graded) {
    text += `: ${graded.kind}, P(mine) ${pct(graded.p_mine)}`;
    if (graded.kind !== "first click" && graded.kind !== "certain") {
      text += ` (lowest ${pct(graded.p_lowest)} at ${at(graded.lowest_cell)})`;
      text += `; chance of winning ${pct(graded.win_before)} before, ${pct(graded.win_after)} after it`
        + ` (${graded.estimate}), loss ${pct(graded.loss)}`;
      if (graded.better) text += `; better: ${at(graded.better)}`;
    }
    if (!graded.survived) text += "; it was a mine";
  }
  $("review-move").textContent = text;
}

$("review-file").addEventListener("change", () => { const f = $("review-file").files[0]; if (f) openReview(f); });
$("review-step").addEventListener("input", () => showStep(+$("review-step").value));
$("review-first").addEventListener("click", () => showStep(0));
$("review-prev").addEventListener("click", () => showStep(+$("review-step").value - 1));
$("review-next").addEventListener("click", () => showStep(+$("review-step").value + 1));
$("review-last").addEventListener("click", () => showStep(reviewed ? reviewed.moves.length : 0));
document.addEventListener("keydown", (e) => {
  if (mode !== "review" || e.target.closest("input:not([type=range]), select, textarea")) return;
  const to = { ArrowLeft: -1, ArrowRight: 1 }[e.key];
  if (to) { e.preventDefault(); showStep(+$("review-step").value + to); }
  if (e.key === "Home") showStep(0);
  if (e.key === "End" && reviewed) showStep(reviewed.moves.length);
});

// ------------------------------------------------------------------ input
function cellOf(event) {
  const el = event.target.closest(".cell");
  return el ? +el.dataset.k : -1;
}

function primary(k) {
  if (k < 0 || mode === "review") return;
  if (mode === "analyse") return edit(k, game.grid[k] >= 8 ? -1 : game.grid[k] + 1);
  if (game.grid[k] > 0) chord(k); else reveal(k);
}

let press = null;  // a touch held down: its cell and the timer that flags it
$("board").addEventListener("pointerdown", (e) => {
  if (e.pointerType !== "touch") return;
  const k = cellOf(e);
  press = { k, timer: setTimeout(() => { flag(k); press = null; }, LONG_PRESS_MS) };
});
$("board").addEventListener("pointerup", (e) => {
  if (e.pointerType !== "touch" || !press) return;
  clearTimeout(press.timer);
  const k = press.k;
  press = null;
  e.preventDefault();
  primary(k);
});
$("board").addEventListener("pointercancel", () => { if (press) clearTimeout(press.timer); press = null; });
$("board").addEventListener("click", (e) => { if (e.pointerType !== "touch") primary(cellOf(e)); });
$("board").addEventListener("contextmenu", (e) => { e.preventDefault(); if (e.pointerType !== "touch") flag(cellOf(e)); });
$("board").addEventListener("pointermove", (e) => { hover = cellOf(e); });
$("board").addEventListener("pointerleave", () => { hover = -1; });

document.addEventListener("keydown", (e) => {
  if (e.target.closest("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
  if (mode === "review") return;  // its own keys step through the game
  if (mode === "analyse" && hover >= 0 && /^[0-8.]$/.test(e.key)) {
    e.preventDefault();
    return edit(hover, e.key === "." ? -1 : +e.key);
  }
  const action = Object.keys(keys).find((a) => keys[a] === e.key.toLowerCase());
  if (!action) return;
  e.preventDefault();
  ({ reveal: () => primary(hover), flag: () => hover >= 0 && flag(hover), undo, hint,
     auto: toggleAuto, new: () => newGame(freshSeed()),
     replay: () => newGame(game.seed) })[action]();
});

function loadKeys() {
  try { return { ...DEFAULT_KEYS, ...JSON.parse(localStorage.getItem("nnsweeper-keys") || "{}") }; }
  catch { return { ...DEFAULT_KEYS }; }
}

function keyForm() {
  const form = $("keymap");
  form.replaceChildren();
  for (const [action, key] of Object.entries(keys)) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.value = key === " " ? "space" : key;
    input.addEventListener("keydown", (e) => {
      e.preventDefault();
      keys[action] = e.key.toLowerCase();
      localStorage.setItem("nnsweeper-keys", JSON.stringify(keys));
      keyForm();
    });
    label.append(action, input);
    form.appendChild(label);
  }
  $("keys").textContent = Object.entries(keys).map(([a, k]) => `${k === " " ? "space" : k} ${a}`).join(", ");
}

// New game: the seed typed in the field, or a new one when the field still holds this game's.
function freshSeed() {
  const typed = +$("seed").value;
  return Number.isInteger(typed) && typed >= 0 && typed !== game.seed ? typed : Math.floor(Math.random() * 2 ** 31);
}
$("new-game").addEventListener("submit", (e) => { e.preventDefault(); newGame(freshSeed()); });
$("again").addEventListener("click", () => newGame(game.seed));
$("preset").addEventListener("change", () => { $("custom").hidden = $("preset").value !== "custom"; });
$("source").addEventListener("change", () => { legend(); draw(); updateOverlay(); });
$("speed").addEventListener("input", () => { $("speed-ms").value = $("speed").value; });
$("undo").addEventListener("click", undo);
$("hint").addEventListener("click", hint);
$("auto").addEventListener("click", toggleAuto);

async function start() {
  keyForm();
  legend();
  try {
    info = await api("info");
    for (const m of info.models) {
      $("source").add(new Option(`${m} P(mine)`, m));
      $("source").add(new Option(`${m} - exact`, `${m}-exact`));
    }
    for (const s of info.solvers) $("solver").add(new Option(s, s, s === "search", s === "search"));
    $("solver").add(new Option("every solver (hint)", "every solver"));
    if (!info.models.length) say("no network here (torch or its weights are not installed): the exact engine only");
  } catch (e) { say(e.message); }
  const shared = /^#pos=(.+)$/.exec(location.hash);
  if (shared) {
    try {
      const p = readPositionCode(decodeURIComponent(shared[1]));
      mode = "analyse";
      $("mode").value = "analyse";
      document.body.classList.add("analyse");
      $("editor").hidden = false;
      setPosition(p.grid, p.flags, p.mines);
      return;
    } catch (e) { say(e.message); }
  }
  newGame(+$("seed").value);
}
start();
