"""The script of the interactive HTML figure (plain JavaScript, no library, nothing fetched).

It decodes the maps (base64 → DecompressionStream("deflate") → fp16 or uint8), colours them through
the app's lookup table with the app's quantisation (``heatmap_data.quantize``: 0..254 the colour map,
255 masked) and draws three views on canvases: the head map, all heads (layers × heads) and the
token lines. ``window.attnviz`` exposes the state and cell geometry for the browser tests.
"""

SCRIPT = r"""
(async function () {
"use strict";
const M = JSON.parse(document.getElementById("attnviz-meta").textContent);
const $ = (id) => document.getElementById(id);
const api = window.attnviz = {ready: false, meta: M};
const b64 = $("attnviz-data").textContent.trim();
const chars = atob(b64), bin = new Uint8Array(chars.length);
for (let i = 0; i < chars.length; i++) bin[i] = chars.charCodeAt(i);  // Uint8Array.from with a callback: 10× slower
api.timings = {decoded: performance.now()};
const buf = await new Response(new Blob([bin]).stream().pipeThrough(new DecompressionStream("deflate"))).arrayBuffer();
api.timings.inflated = performance.now();
const HALF = new Float32Array(65536);  // every fp16 bit pattern → its value
for (let h = 0; h < 65536; h++) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, f = h & 1023;
  HALF[h] = e === 0 ? s * f * Math.pow(2, -24) : e === 31 ? (f ? NaN : s * Infinity) : s * (1 + f / 1024) * Math.pow(2, e - 15);
}
// per part and layer: Float32Array (H, Tq, Tk) of the stored values, and the masked cells
for (const P of M.parts) {
  const n = P.queries.length * P.keys.length;
  for (const E of P.layers) {
    const vals = new Float32Array(P.heads * n);
    if (M.precision === "fp16") {
      const hi = new Uint8Array(buf, E.offset, vals.length), lo = new Uint8Array(buf, E.offset + vals.length, vals.length);
      for (let i = 0; i < vals.length; i++) vals[i] = HALF[(hi[i] << 8) | lo[i]];  // two byte planes (html_data)
    } else {
      const raw = new Uint8Array(buf, E.offset, vals.length);
      for (let h = 0; h < P.heads; h++) for (let i = 0; i < n; i++) vals[h * n + i] = raw[h * n + i] / 255 * E.scale[h];
    }
    E.vals = vals;
    E.mask = E.mask_offset !== undefined ? new Uint8Array(buf, E.mask_offset, n) : null;
  }
  P.shared = Math.max(...P.layers.map((E) => Math.max(...E.max)));
}
api.timings.unpacked = performance.now();
const LUT = M.lut;  // the app's 256 RGBA colours: 0..254 the colour map, 255 masked
const st = {view: M.view, part: 0, layer: 0, head: 0, scale: "fixed", heads: null, hover: null};
const part = () => M.parts[st.part];
const entry = () => part().layers[st.layer];
function fmt(v) { return v === 0 || Math.abs(v) >= 1e-4 ? v.toFixed(6) : v.toExponential(3).replace(/e([+-])(\d)$/, (m, sign, d) => `e${sign}0${d}`); }
function tok(t) { return ({" ": "␣", "\n": "⏎", "\t": "⇥", "": "∅"})[t] ?? t.replace(/\n/g, "⏎").replace(/\t/g, "⇥"); }
function vmaxOf(E, h) { return st.scale === "fixed" ? 1 : st.scale === "per-map" ? E.max[h] : part().shared; }
function scaleNote() {
  return st.scale === "fixed" ? "fixed scale 0–1" : st.scale === "per-map" ? "scale: this head's maximum"
    : "one scale for all layers and heads";
}
function index(v, vmax) {  // heatmap_data.quantize, in float32 as numpy does
  const s = vmax > 0 ? Math.fround(254 / vmax) : 0;
  return Math.floor(Math.min(Math.max(Math.fround(v * s), 0), 254) + 0.5);
}
function paintMap(E, h, nq, nk, vmax, out, stride, r0, c0, pool) {
  // one map into ImageData ``out``; pool > 1: each pixel the maximum of a pool×pool block (as the app's thumbnails)
  const n = nq * nk, base = h * n;
  for (let r = 0; r < Math.ceil(nq / pool); r++) for (let c = 0; c < Math.ceil(nk / pool); c++) {
    let top = -1, allMasked = true;
    for (let i = r * pool; i < Math.min(nq, (r + 1) * pool); i++) for (let j = c * pool; j < Math.min(nk, (c + 1) * pool); j++) {
      const k = i * nk + j;
      if (E.mask && E.mask[k]) continue;
      allMasked = false;
      if (E.vals[base + k] > top) top = E.vals[base + k];
    }
    const col = LUT[allMasked ? 255 : index(top, vmax)], p = ((r0 + r) * stride + c0 + c) * 4;
    out.data[p] = col[0]; out.data[p + 1] = col[1]; out.data[p + 2] = col[2]; out.data[p + 3] = col[3];
  }
}
function colourBar(ctx, x, y, w, h, vmax, label) {
  for (let i = 0; i < h; i++) {
    const c = LUT[Math.round(254 * (1 - i / (h - 1)))];
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`; ctx.fillRect(x, y + i, w, 1);
  }
  ctx.fillStyle = M.fg; ctx.font = "12px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  for (const f of [0, 0.2, 0.4, 0.6, 0.8, 1]) ctx.fillText((vmax * f).toPrecision(3).replace(/\.?0+$/, "") || "0", x + w + 4, y + h * (1 - f));
  ctx.save(); ctx.translate(x + w + 52, y + h / 2); ctx.rotate(-Math.PI / 2); ctx.textAlign = "center";
  ctx.fillText(label, 0, 0); ctx.restore();
}
function labels(ctx, names, at, step, font, vertical, x0) {
  ctx.font = `${font}px sans-serif`; ctx.fillStyle = M.fg; ctx.textBaseline = "middle";
  const every = Math.max(1, Math.ceil((font + 1) / step));
  for (let i = 0; i < names.length; i += every) {
    const t = tok(names[i]).slice(0, 14);
    if (vertical) { ctx.save(); ctx.translate(at(i), x0); ctx.rotate(-Math.PI / 2); ctx.textAlign = "right"; ctx.fillText(t, 0, 0); ctx.restore(); }
    else { ctx.textAlign = "right"; ctx.fillText(t, x0, at(i)); }
  }
}
// -- head map ---------------------------------------------------------------------------------
const G = {};  // geometry of the head map, for hovers and the tests
function drawHeadMap() {
  const P = part(), E = entry(), h = st.head, nq = P.queries.length, nk = P.keys.length;
  const cv = $("map"), ctx = cv.getContext("2d");
  const side = Math.min(640, Math.max(360, 12 * Math.max(nq, nk))), cell = side / Math.max(nq, nk);
  const left = 110, top = 12, vmax = vmaxOf(E, h);
  Object.assign(G, {left, top, cell, nq, nk});
  cv.width = left + nk * cell + 150; cv.height = top + nq * cell + 110;  // key labels below, as in the app
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, cv.width, cv.height);
  const img = new ImageData(nk, nq);
  paintMap(E, h, nq, nk, vmax, img, nk, 0, 0, 1);
  const off = document.createElement("canvas"); off.width = nk; off.height = nq;
  off.getContext("2d").putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, left, top, nk * cell, nq * cell);
  const font = Math.max(6, Math.min(13, cell - 1));
  labels(ctx, P.queries, (i) => top + (i + 0.5) * cell, cell, font, false, left - 4);
  labels(ctx, P.keys, (j) => left + (j + 0.5) * cell, cell, font, true, top + nq * cell + 4);
  if (st.hover) {
    ctx.strokeStyle = M.highlight; ctx.lineWidth = 2;
    ctx.strokeRect(left + st.hover[1] * cell, top + st.hover[0] * cell, cell, cell);
  }
  colourBar(ctx, left + nk * cell + 16, top, 16, Math.max(120, nq * cell), vmax, `attention weight · ${scaleNote()}`);
  $("title").textContent = `Layer ${E.layer} · head ${h} · ${P.name}`;
}
function cellText(i, j) {
  const P = part(), E = entry(), n = P.queries.length * P.keys.length, k = i * P.keys.length + j;
  const head = `${tok(P.queries[i])} [${i}] → ${tok(P.keys[j])} [${j}]: `;
  if (E.mask && E.mask[k]) return [head + "masked (−∞ before softmax)", null];
  const v = E.vals[st.head * n + k];
  return [head + fmt(v), v];
}
function hoverMap(ev) {
  const r = $("map").getBoundingClientRect();
  const j = Math.floor((ev.clientX - r.left - G.left) / G.cell), i = Math.floor((ev.clientY - r.top - G.top) / G.cell);
  if (i < 0 || j < 0 || i >= G.nq || j >= G.nk) { st.hover = null; status("", null); drawHeadMap(); return; }
  st.hover = [i, j];
  const [text, v] = cellText(i, j);
  status(text, v);
  drawHeadMap();
}
api.cellCenter = (i, j) => {
  const r = $("map").getBoundingClientRect();
  return [r.left + G.left + (j + 0.5) * G.cell, r.top + G.top + (i + 0.5) * G.cell];
};
// -- all heads --------------------------------------------------------------------------------
function drawModel() {
  const P = part(), nq = P.queries.length, nk = P.keys.length, L = P.layers.length, H = P.heads;
  const pool = Math.max(1, Math.ceil(Math.max(nq, nk) / 64)), tq = Math.ceil(nq / pool), tk = Math.ceil(nk / pool);
  const notes = P.layers[0].entropy !== undefined;  // the model view's numbers under each head
  const size = Math.max(24, Math.min(96, Math.floor(900 / H) - 6)), gap = notes ? 20 : 6, left = 40, top = 24;
  const cv = $("grid"), ctx = cv.getContext("2d");
  cv.width = left + H * (size + gap); cv.height = top + L * (size + gap);
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, cv.width, cv.height);
  ctx.imageSmoothingEnabled = false;
  const off = document.createElement("canvas"); off.width = tk; off.height = tq;
  const octx = off.getContext("2d");
  P.layers.forEach((E, l) => {
    for (let h = 0; h < H; h++) {
      const img = new ImageData(tk, tq);
      paintMap(E, h, nq, nk, vmaxOf(E, h), img, tk, 0, 0, pool);
      octx.putImageData(img, 0, 0);
      ctx.drawImage(off, left + h * (size + gap), top + l * (size + gap), size, size);
    }
  });
  if (notes) {
    ctx.fillStyle = M.fg; ctx.font = `${Math.min(12, Math.max(8, size / 6))}px sans-serif`; ctx.textAlign = "center";
    ctx.textBaseline = "top";
    P.layers.forEach((E, l) => { for (let h = 0; h < H; h++) ctx.fillText(noteText(E, h),
      left + h * (size + gap) + size / 2, top + l * (size + gap) + size + 2); });
  }
  ctx.strokeStyle = M.fg; ctx.lineWidth = 2;
  ctx.strokeRect(left + st.head * (size + gap) - 1, top + st.layer * (size + gap) - 1, size + 2, size + 2);
  ctx.fillStyle = M.fg; ctx.font = "12px sans-serif"; ctx.textAlign = "center"; ctx.textBaseline = "bottom";
  for (let h = 0; h < H; h++) ctx.fillText(`H${h}`, left + h * (size + gap) + size / 2, top - 4);
  ctx.textAlign = "right"; ctx.textBaseline = "middle";
  P.layers.forEach((E, l) => ctx.fillText(`L${E.layer}`, left - 6, top + l * (size + gap) + size / 2));
  Object.assign(G, {gLeft: left, gTop: top, gPitch: size + gap, gSize: size});
  const pooled = pool > 1 ? ` · each drawn cell = max of ${pool}×${pool} cells` : "";
  const legend = notes ? " — under each: entropy (nats)" + (P.distance_unit ? ` · mean attention distance (${P.distance_unit})` : "") : "";
  $("title").textContent = `All heads · ${P.name}${legend} · ${scaleNote()}${pooled}`;
}
function gridCell(ev) {
  const r = $("grid").getBoundingClientRect(), P = part();
  const h = Math.floor((ev.clientX - r.left - G.gLeft) / G.gPitch), l = Math.floor((ev.clientY - r.top - G.gTop) / G.gPitch);
  return h >= 0 && l >= 0 && h < P.heads && l < P.layers.length ? [l, h] : null;
}
api.thumbCenter = (l, h) => {
  const r = $("grid").getBoundingClientRect();
  return [r.left + G.gLeft + h * G.gPitch + G.gSize / 2, r.top + G.gTop + l * G.gPitch + G.gSize / 2];
};
function hoverModel(ev) {
  const c = gridCell(ev);
  if (!c) { status("", null); return; }
  const P = part(), E = P.layers[c[0]], h = c[1];  // as ModelView.head_info
  let text = `Layer ${E.layer} · head ${h}: largest weight ${E.max[h].toFixed(4)}`;
  if (E.entropy) text += `, entropy ${E.entropy[h].toFixed(4)} nats`;
  if (E.distance) text += `, mean distance ${E.distance[h].toFixed(3)} ${P.distance_unit}`;
  status(text, E.max[h]);
}
function noteText(E, h) {  // as ModelView._note
  return E.entropy[h].toFixed(2) + (E.distance ? ` · ${E.distance[h].toFixed(1)}` : "");
}
// -- token lines ------------------------------------------------------------------------------
function linesOf(E, heads, nq, nk, focus) {
  const n = part().queries.length * part().keys.length, K = part().keys.length, out = [];
  for (const h of heads) for (let i = 0; i < nq; i++) for (let j = 0; j < nk; j++) {
    const w = E.vals[h * n + i * K + j];
    if (w < 1 / 255) continue;
    const touches = !focus || (focus[0] === "left" ? focus[1] === i : focus[1] === j);
    if (focus && !touches) continue;  // hovering a token filters its lines
    out.push([w, h, i, j]);
  }
  out.sort((a, b) => a[0] - b[0]);  // the strongest drawn last
  const cut = out.length > 3000 ? out[out.length - 3000][0] : 0;
  return [out.length > 3000 ? out.slice(out.length - 3000) : out, cut];
}
function drawLines() {
  const P = part(), E = entry(), nq = Math.min(P.queries.length, M.line_tokens), nk = Math.min(P.keys.length, M.line_tokens);
  const heads = st.heads ?? [...Array(P.heads).keys()];
  const pitch = Math.max(9, Math.min(22, 700 / Math.max(nq, nk))), top = 16, lx = 150, rx = 450;
  const cv = $("lines"), ctx = cv.getContext("2d");
  cv.width = 600; cv.height = top * 2 + pitch * Math.max(nq, nk);
  ctx.fillStyle = M.bg; ctx.fillRect(0, 0, cv.width, cv.height);
  const [lines, cut] = linesOf(E, heads, nq, nk, st.focus);
  const off = (h) => (heads.indexOf(h) - (heads.length - 1) / 2) * Math.min(2, pitch / (2 * heads.length));
  ctx.lineWidth = 1.2;
  for (const [w, h, i, j] of lines) {
    ctx.strokeStyle = M.head_colours[h % M.head_colours.length]; ctx.globalAlpha = Math.min(1, w);
    ctx.beginPath(); ctx.moveTo(lx + 6, top + (i + 0.5) * pitch + off(h)); ctx.lineTo(rx - 6, top + (j + 0.5) * pitch + off(h)); ctx.stroke();
  }
  ctx.globalAlpha = 1;
  const font = Math.max(7, Math.min(13, pitch - 2));
  labels(ctx, P.queries.slice(0, nq), (i) => top + (i + 0.5) * pitch, pitch, font, false, lx);
  ctx.textAlign = "left";
  for (let j = 0; j < nk; j += Math.max(1, Math.ceil((font + 1) / pitch))) ctx.fillText(tok(P.keys[j]).slice(0, 14), rx, top + (j + 0.5) * pitch);
  Object.assign(G, {lTop: top, lPitch: pitch, lx, rx, lnq: nq, lnk: nk});
  const which = heads.length === P.heads && P.heads > 1 ? "all heads" : `heads ${heads.join(", ") || "none"}`;
  const shown = P.queries.length > nq || P.keys.length > nk ? ` · first ${M.line_tokens} tokens` : "";
  const omitted = cut > 0 ? ` · lines fainter than ${cut.toFixed(3)} left out` : "";
  $("title").textContent = `Layer ${E.layer} · ${which} · ${P.name} · line opacity = attention weight${shown}${omitted}`;
  document.querySelectorAll("#heads button").forEach((b, h) => b.classList.toggle("off", !heads.includes(h)));
}
function tokenAt(ev) {
  const r = $("lines").getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
  const i = Math.floor((y - G.lTop) / G.lPitch);
  if (x < G.lx + 4 && i >= 0 && i < G.lnq) return ["left", i];
  if (x > G.rx - 4 && i >= 0 && i < G.lnk) return ["right", i];
  return null;
}
function tokenText(side, idx) {  // as TokenLinesView.token_text: the strongest link of each shown head
  const P = part(), E = entry(), K = P.keys.length, n = P.queries.length * K;
  const heads = st.heads ?? [...Array(P.heads).keys()], parts = [];
  for (const h of heads) {
    let best = -1, bj = 0;
    const count = side === "left" ? Math.min(K, M.line_tokens) : Math.min(P.queries.length, M.line_tokens);
    for (let j = 0; j < count; j++) {
      const v = side === "left" ? E.vals[h * n + idx * K + j] : E.vals[h * n + j * K + idx];
      if (v > best) { best = v; bj = j; }
    }
    parts.push(`H${h}: ${tok((side === "left" ? P.keys : P.queries)[bj])} [${bj}] ${fmt(best)}`);
  }
  const names = side === "left" ? P.queries : P.keys;
  return `${tok(names[idx])} [${idx}] ${side === "left" ? "→ strongest key" : "← strongest query"}: ${parts.join("; ")}`;
}
function hoverLines(ev) {
  const t = tokenAt(ev);
  st.focus = t;
  status(t ? tokenText(...t) : "", null);
  drawLines();
}
api.tokenCenter = (side, i) => {
  const r = $("lines").getBoundingClientRect();
  return [r.left + (side === "left" ? G.lx - 20 : G.rx + 20), r.top + G.lTop + (i + 0.5) * G.lPitch];
};
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
    b.style.borderColor = b.style.color = M.head_colours[h % M.head_colours.length];
    b.onclick = () => { const s = new Set(st.heads ?? [...Array(P.heads).keys()]); s.has(h) ? s.delete(h) : s.add(h);
      st.heads = [...s].sort((a, b) => a - b); draw(); };
    return b;
  }));
}
function draw() {
  for (const v of ["head-map", "model", "token-lines"]) {
    $("view-" + v).hidden = st.view !== v; $("tab-" + v).classList.toggle("on", st.view === v);
  }
  $("head").parentElement.hidden = st.view !== "head-map";
  $("layer").parentElement.hidden = st.view === "model";
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
  return E.vals[head * P.queries.length * P.keys.length + i * P.keys.length + j]; };
$("part").onchange = (e) => api.set({part: M.parts[+e.target.value].part});
$("layer").onchange = (e) => { st.layer = +e.target.value; draw(); };
$("head").onchange = (e) => { st.head = +e.target.value; draw(); };
$("scale").onchange = (e) => { st.scale = e.target.value; draw(); };
$("all-heads").onclick = () => { st.heads = null; draw(); };
for (const v of ["head-map", "model", "token-lines"]) $("tab-" + v).onclick = () => { st.view = v; draw(); };
$("map").onmousemove = hoverMap;
// leaving a canvas because its view was switched away must not redraw that view (it would retitle the page)
$("map").onmouseleave = () => { st.hover = null; status("", null); if (st.view === "head-map") drawHeadMap(); };
$("grid").onmousemove = hoverModel;
$("grid").onclick = (ev) => { const c = gridCell(ev); if (c) { st.layer = c[0]; st.head = c[1]; st.view = "head-map"; controls(); draw(); } };
$("lines").onmousemove = hoverLines;
$("lines").onmouseleave = () => { st.focus = null; status("", null); if (st.view === "token-lines") drawLines(); };
$("notice").textContent = M.notices.join(" · ");
$("notice").hidden = !M.notices.length;
st.part = Math.max(0, M.parts.findIndex((p) => p.part === M.start.part));
st.layer = Math.max(0, part().layers.findIndex((E) => E.layer === M.start.layer));
st.head = Math.min(M.start.head, part().heads - 1);
controls(); draw();
api.ready = true; api.drawn = performance.now();
document.body.dataset.ready = "1";
// painted: the frame after the one that showed the first map (ms since navigation start; the benchmark reads it)
requestAnimationFrame(() => requestAnimationFrame(() => { api.painted = performance.now(); }));
})().catch((e) => { const n = document.getElementById("notice"); n.hidden = false; n.textContent = "cannot show the figure: " + e; });
"""
