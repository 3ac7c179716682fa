"""The interactive page's views and controls (JavaScript), joined into :data:`html_script.SCRIPT`.

Head map (with a vision input's picture under its patch grid), all heads, token lines; the keyboard:
Tab reaches every control and canvas, ←/→ change the head and ↑/↓ the layer on a focused canvas,
Shift+arrows move a cell cursor on the head map (its value read out in the status line, a live region),
Enter on the all-heads grid opens the head; arrows on a vision input's picture walk the query patch.
"""

from attnviz.export.html_script_grid_lines import GRID_LINES_SCRIPT

VIEWS_SCRIPT = r"""
// -- head map ---------------------------------------------------------------------------------
function mapGeometry(P) {
  const nq = P.rows, nk = P.cols, n = Math.max(nq, nk), dpr = window.devicePixelRatio || 1;
  // html_layout.map_side (what a notebook's iframe is sized for); in a window of its own the map takes the
  // window's room, a short input's too (12 tokens drew 360 px in a 1,920×1,080 window, two thirds of it empty)
  const fit = Math.max(LAY.map_min, Math.min(LAY.map_cell * n, LAY.map_max)), room = windowRoom();
  const side = room === null ? fit : Math.max(fit, room);
  const pool = Math.max(1, Math.ceil(n / Math.floor(side * dpr)));  // never more cells than device pixels
  const dq = Math.ceil(nq / pool), dk = Math.ceil(nk / pool);
  return {nq, nk, pool, dq, dk, cell: side / Math.max(dq, dk), left: LAY.map_left, top: LAY.map_top,
          rq: pool * P.row_step, rk: pool * P.col_step, room};
}
function windowRoom() {  // the map's side that fits the browser window beside its labels and colour bar,
  // and under the page's header (scrolled to the top); null in a notebook's iframe, which is sized for
  // html_layout.map_side (page_height), so there the map keeps that side
  if (window.self !== window.top) return null;
  const r = $("map").getBoundingClientRect(), top = r.top + window.scrollY, left = r.left + window.scrollX;
  return Math.floor(Math.min(window.innerWidth - left - LAY.map_left - LAY.map_right - 24,
                             window.innerHeight - top - LAY.map_top - LAY.map_bottom));
}
let resizing = null;  // a window resize redraws the head map at its new size, once the drag settles
window.addEventListener("resize", () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => {
    if (st.view === "head-map") { st.hover = null; drawHeadMap(); } else if (st.view === "model") drawModel();
    else if (st.view === "token-lines") drawLines();  // its rows and width follow the window too
  }, 100);
});
function drawHeadMap(again) {
  const P = part(), E = entry(), h = st.head, g = mapGeometry(P);
  Object.assign(G, g);
  const cv = $("map"), W = g.left + g.dk * g.cell + LAY.map_right, H = g.top + g.dq * g.cell + LAY.map_bottom;
  const ctx = sized(cv, W, H), vmax = vmaxOf(E, h);
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, W, H);
  const img = new ImageData(g.dk, g.dq);
  paintMap(E, h, g.nq, g.nk, vmax, img, g.pool);
  const off = document.createElement("canvas"); off.width = g.dk; off.height = g.dq;
  off.getContext("2d").putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, g.left, g.top, g.dk * g.cell, g.dq * g.cell);
  const font = Math.max(LAY.min_text_px, Math.min(13, g.cell - 1));  // never under 12 px: closer rows name every k-th (labels)
  const qn = Array.from({length: g.dq}, (_, i) => P.queries[i * g.rq]), kn = Array.from({length: g.dk}, (_, j) => P.keys[j * g.rk]);
  labels(ctx, qn, (i) => g.top + (i + 0.5) * g.cell, g.cell, font, false, g.left - 4);
  const veil = P.veiled ?? null;  // a row that wrote nothing: its cells washed out, its label grey (as the app)
  if (veil !== null && g.rq === 1 && veil < g.dq) {
    const y = g.top + veil * g.cell;
    ctx.globalAlpha = 0.78; ctx.fillStyle = M.bg; ctx.fillRect(g.left, y, g.dk * g.cell, g.cell); ctx.globalAlpha = 1;
    ctx.fillRect(0, y, g.left - 1, g.cell);
    ctx.fillStyle = "#888888"; ctx.textAlign = "right"; ctx.fillText(axisText(tok(P.queries[veil])), g.left - 4, y + g.cell / 2);
  }
  labels(ctx, kn, (j) => g.left + (j + 0.5) * g.cell, g.cell, font, true, g.top + g.dq * g.cell + 4);
  if (st.hover) {
    ctx.strokeStyle = M.highlight; ctx.lineWidth = 2;
    ctx.strokeRect(g.left + st.hover[1] * g.cell, g.top + st.hover[0] * g.cell, Math.max(g.cell, 2), Math.max(g.cell, 2));
  }
  colourBar(ctx, g.left + g.dk * g.cell + 16, g.top, 16, Math.max(120, g.dq * g.cell), vmax, `attention weight · ${scaleNote()}`);
  const pooled = g.rq > 1 || g.rk > 1 ? ` · each drawn cell the largest weight of up to ${g.rq}×${g.rk} query × key positions` : "";
  $("title").textContent = `Layer ${E.layer} · head ${h} · ${P.name}${pooled}`;
  cv.setAttribute("aria-label", `Head map of layer ${E.layer}, head ${h}, ${P.name}: ${P.queries.length} queries by ` +
    `${P.keys.length} keys. Left and right arrows change the head, up and down the layer; with Shift they move a cell cursor.`);
  drawPicture();
  // the title above may have wrapped to another line and moved the map: sized once more for the room left
  if (!again && windowRoom() !== g.room) drawHeadMap(true);
}
function cellText(i, j) {  // drawn cell (i, j): one weight, or the largest of a block with its positions
  const P = part(), E = entry(), g = G;
  const r0 = i * g.pool, r1 = Math.min(g.nq, r0 + g.pool), c0 = j * g.pool, c1 = Math.min(g.nk, c0 + g.pool);
  const [v, masked] = blockMax(E, st.head, g.nk, r0, r1, c0, c1);
  const qa = r0 * P.row_step, qb = Math.min(P.queries.length, r1 * P.row_step) - 1;
  const ka = c0 * P.col_step, kb = Math.min(P.keys.length, c1 * P.col_step) - 1;
  const head = `${span(P.queries, qa, qb)} → ${span(P.keys, ka, kb)}: `;
  if (masked) return [head + "masked (−∞ before softmax)", null];
  return [head + (qa === qb && ka === kb ? "" : "largest ") + fmt(v), v];
}
function showCell(cell) {
  st.hover = cell;
  if (cell) { const [text, v] = cellText(...cell); status(text, v); } else status("", null);
  drawHeadMap();
}
function hoverMap(ev) {
  const r = $("map").getBoundingClientRect();
  const j = Math.floor((ev.clientX - r.left - G.left) / G.cell), i = Math.floor((ev.clientY - r.top - G.top) / G.cell);
  showCell(i < 0 || j < 0 || i >= G.dq || j >= G.dk ? null : [i, j]);
}
api.geometry = () => ({...G});  // drawn cells of the head map (dq × dk, cell px, rq × rk positions each)
api.cellCenter = (i, j) => {
  const r = $("map").getBoundingClientRect();
  return [r.left + G.left + (j + 0.5) * G.cell, r.top + G.top + (i + 0.5) * G.cell];
};
// -- a vision input: the picture under its patch grid, the hovered query's row drawn over its patches
function drawPicture() {
  const I = M.image, cv = $("picture"), P = part();
  cv.hidden = !I || P.part !== "self" || M.pooled;
  if (cv.hidden) return;
  const S = 256, [gh, gw] = I.grid, ctx = sized(cv, S, S + 36), pw = S / gw, ph = S / gh;
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, S, S + 36);
  ctx.imageSmoothingEnabled = true; ctx.drawImage(I.bitmap, 0, 0, S, S);
  const q = st.hover ? st.hover[0] : null, E = entry(), nk = P.cols;
  if (q !== null) {  // the query's weights on every patch, coloured as the map, over the picture
    let top = 0;
    for (let p = 0; p < gh * gw; p++) top = Math.max(top, E.vals[st.head * P.rows * nk + q * nk + I.prefix + p]);
    for (let p = 0; p < gh * gw; p++) {
      const v = E.vals[st.head * P.rows * nk + q * nk + I.prefix + p], c = LUT[index(v, vmaxOf(E, st.head))];
      ctx.globalAlpha = 0.15 + 0.7 * (top > 0 ? v / top : 0);
      ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`; ctx.fillRect((p % gw) * pw, Math.floor(p / gw) * ph, pw, ph);
    }
    ctx.globalAlpha = 1;
  }
  ctx.strokeStyle = "rgba(255,255,255,0.7)"; ctx.lineWidth = 1;
  for (let c = 0; c <= gw; c++) { ctx.beginPath(); ctx.moveTo(c * pw, 0); ctx.lineTo(c * pw, S); ctx.stroke(); }
  for (let r = 0; r <= gh; r++) { ctx.beginPath(); ctx.moveTo(0, r * ph); ctx.lineTo(S, r * ph); ctx.stroke(); }
  if (q !== null && q >= I.prefix) {
    const p = q - I.prefix; ctx.strokeStyle = M.highlight; ctx.lineWidth = 3;
    ctx.strokeRect((p % gw) * pw, Math.floor(p / gw) * ph, pw, ph);
  }
  ctx.fillStyle = M.fg; ctx.font = "12px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "top";
  ctx.fillText(q === null ? "hover a row or a patch: its attention" : `query ${tok(P.queries[q])} [${q}]: its weights`, 0, S + 6);
  ctx.fillText("over the patches (more opaque = more)", 0, S + 20);
  cv.setAttribute("aria-label", `The input picture under its ${gh}×${gw} patch grid` +
    (q === null ? "" : `, with the weights of query ${P.queries[q]} drawn over it`));
  Object.assign(G, {pS: S, pw, ph});
}
function hoverPicture(ev) {
  const I = M.image, r = $("picture").getBoundingClientRect(), [gh, gw] = I.grid;
  const c = Math.floor((ev.clientX - r.left) / G.pw), row = Math.floor((ev.clientY - r.top) / G.ph);
  if (c < 0 || row < 0 || c >= gw || row >= gh) return;
  showCell([I.prefix + row * gw + c, st.hover ? st.hover[1] : 0]);
}
""" + GRID_LINES_SCRIPT + r"""
// -- controls ---------------------------------------------------------------------------------
function status(text, value) {
  const s = $("status"); s.textContent = text || "\u00a0";
  if (value === null || value === undefined) delete s.dataset.value; else s.dataset.value = String(value);
}
function fill(sel, items, value) {
  sel.replaceChildren(...items.map(([v, t]) => Object.assign(document.createElement("option"), {value: v, textContent: t})));
  sel.value = String(value);
}
function controls() {
  const P = part();
  fill($("part"), M.parts.map((p, i) => [i, p.name]), st.part);
  $("part").parentElement.hidden = M.parts.length < 2;
  fill($("layer"), P.layers.map((E, i) => [i, `layer ${E.layer}`]), st.layer);
  fill($("head"), [...Array(P.heads).keys()].map((h) => [h, `head ${h}`]), st.head);
  $("heads").replaceChildren(...[...Array(P.heads).keys()].map((h) => {
    const b = Object.assign(document.createElement("button"), {textContent: `H${h}`, title: `show or hide head ${h}`});
    b.setAttribute("aria-label", `head ${h} drawn`);
    b.style.borderColor = b.style.color = M.head_colours[h % M.head_colours.length];
    b.onclick = () => { const s = new Set(st.heads ?? [...Array(P.heads).keys()]); s.has(h) ? s.delete(h) : s.add(h);
      st.heads = [...s].sort((a, b) => a - b); draw(); };
    return b;
  }));
}
const VIEWS = ["head-map", "model", "token-lines"];
function draw() {
  for (const v of VIEWS) {
    $("view-" + v).hidden = st.view !== v; $("tab-" + v).classList.toggle("on", st.view === v);
    $("tab-" + v).setAttribute("aria-selected", String(st.view === v));
  }
  $("tab-token-lines").hidden = M.pooled;  // token lines need every weight; a pooled page holds block maxima
  $("head").parentElement.hidden = st.view !== "head-map";
  $("layer").parentElement.hidden = st.view === "model";
  $("scale").parentElement.hidden = st.view === "token-lines";  // line opacity is the weight: no colour scale
  $("heads").parentElement.hidden = st.view !== "token-lines";
  ({"head-map": drawHeadMap, "model": drawModel, "token-lines": drawLines})[st.view]();
  Object.assign(api, {view: st.view, part: part().part, layer: entry().layer, head: st.head, heads: st.heads, scale: st.scale});
}
api.set = (changes) => {  // for the tests and the notebook: {view, part, layer (the model's number), head, scale}
  if ("part" in changes) { st.part = M.parts.findIndex((p) => p.part === changes.part); st.layer = 0; st.heads = null; controls(); }
  if ("layer" in changes) st.layer = part().layers.findIndex((E) => E.layer === changes.layer);
  for (const k of ["view", "head", "scale", "heads"]) if (k in changes) st[k] = changes[k];
  controls(); draw();
};
api.value = (layer, head, i, j) => { const P = part(), E = P.layers.find((x) => x.layer === layer);
  return E.vals[head * P.rows * P.cols + i * P.cols + j]; };
function step(dLayer, dHead) {  // the keyboard's layer/head change, said in the status line
  const P = part();
  st.layer = Math.min(P.layers.length - 1, Math.max(0, st.layer + dLayer));
  st.head = Math.min(P.heads - 1, Math.max(0, st.head + dHead));
  st.hover = null; controls(); draw();
  status(`layer ${entry().layer} · head ${st.head}`, null);
}
const ARROWS = {ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1]};
function onKey(ev) {
  const d = ARROWS[ev.key];
  if (st.view === "model" && ev.key === "Enter") { st.view = "head-map"; draw(); $("map").focus(); ev.preventDefault(); return; }
  if (!d) return;
  ev.preventDefault();  // the arrows act on the figure, not scroll the page
  if (st.view === "head-map" && ev.shiftKey) {  // a cell cursor: its value read out in the status line
    const c = st.hover ?? [0, 0];
    showCell([Math.min(G.dq - 1, Math.max(0, c[0] + d[0])), Math.min(G.dk - 1, Math.max(0, c[1] + d[1]))]);
  } else step(d[0], st.view === "token-lines" ? 0 : d[1]);
}
$("part").onchange = (e) => api.set({part: M.parts[+e.target.value].part});
$("layer").onchange = (e) => { st.layer = +e.target.value; draw(); };
$("head").onchange = (e) => { st.head = +e.target.value; draw(); };
$("scale").onchange = (e) => { st.scale = e.target.value; draw(); };
$("all-heads").onclick = () => { st.heads = null; draw(); };
for (const v of VIEWS) $("tab-" + v).onclick = () => { st.view = v; draw(); };
for (const id of ["map", "grid", "lines"]) $(id).onkeydown = onKey;
$("map").onmousemove = hoverMap;
// leaving a canvas because its view was switched away must not redraw that view (it would retitle the page)
$("map").onmouseleave = () => { st.hover = null; status("", null); if (st.view === "head-map") drawHeadMap(); };
$("picture").onmousemove = (ev) => { if (M.image) hoverPicture(ev); };
$("picture").onkeydown = (ev) => {  // arrows walk the query patch over the grid
  const d = ARROWS[ev.key], I = M.image;
  if (!d || !I) return;
  ev.preventDefault();
  const [gh, gw] = I.grid, p = st.hover && st.hover[0] >= I.prefix ? st.hover[0] - I.prefix : -1;
  const r = p < 0 ? 0 : Math.min(gh - 1, Math.max(0, Math.floor(p / gw) + d[0]));
  const c = p < 0 ? 0 : Math.min(gw - 1, Math.max(0, (p % gw) + d[1]));
  showCell([I.prefix + r * gw + c, st.hover ? st.hover[1] : 0]);
};
$("grid").onmousemove = hoverModel;
for (const [id, dl, dh] of [["grid-up", -1, 0], ["grid-down", 1, 0], ["grid-left", 0, -1], ["grid-right", 0, 1]])
  $(id).onclick = () => turnGridPage(dl, dh);
$("grid").onclick = (ev) => { const c = gridCell(ev); if (c) { st.layer = c[0]; st.head = c[1]; st.view = "head-map"; controls(); draw(); } };
$("lines").onmousemove = hoverLines;
$("lines").onmouseleave = () => { st.focus = null; status("", null); if (st.view === "token-lines") drawLines(); };
$("notice").textContent = M.notices.join(" · ");
$("notice").hidden = !M.notices.length;
st.part = Math.max(0, M.parts.findIndex((p) => p.part === M.start.part));
st.layer = Math.max(0, part().layers.findIndex((E) => E.layer === M.start.layer));
st.head = Math.min(M.start.head, part().heads - 1);
if (M.pooled && st.view === "token-lines") st.view = "head-map";
controls(); draw();
matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`).addEventListener("change", () => draw());  // moved to another screen
api.ready = true; api.drawn = performance.now();
document.body.dataset.ready = "1";
// painted: the frame after the one that showed the first map (ms since navigation start; the benchmark reads it)
requestAnimationFrame(() => requestAnimationFrame(() => { api.painted = performance.now(); }));
"""
