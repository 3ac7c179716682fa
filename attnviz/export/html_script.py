"""The script of the interactive HTML figure (plain JavaScript, no library, nothing fetched).

It decodes the maps (base64 → DecompressionStream("deflate") → fp16, or uint8 of each row's maximum),
colours them through the app's lookup table with the app's quantisation (``heatmap_data.quantize``:
0..254 the colour map, 255 masked) and draws three views on canvases whose backing store is the CSS
size × devicePixelRatio (crisp on HiDPI): the head map (max-pooled to the pixels it has, so no cell is
dropped), all heads (layers × heads) and the token lines. Every control is reachable by keyboard; on a
focused canvas ←/→ change the head and ↑/↓ the layer. ``window.attnviz`` exposes the state and cell
geometry for the browser tests. The layout numbers are :data:`attnviz.export.html_layout.LAYOUT`.
"""

from attnviz.export.html_script_views import VIEWS_SCRIPT

SCRIPT = r"""
(async function () {
"use strict";
const M = JSON.parse(document.getElementById("attnviz-meta").textContent);
const $ = (id) => document.getElementById(id);
const api = window.attnviz = {ready: false, meta: M};
$("app").hidden = false;  // scripts run: the controls act (without scripts the <noscript> picture shows)
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
// per part and layer: Float32Array (H, rows, cols) of the stored values, and the masked cells
for (const P of M.parts) {
  const nq = P.rows, nk = P.cols, n = nq * nk;
  for (const E of P.layers) {
    const vals = new Float32Array(P.heads * n);
    if (M.precision === "fp16") {
      const hi = new Uint8Array(buf, E.offset, vals.length), lo = new Uint8Array(buf, E.offset + vals.length, vals.length);
      for (let i = 0; i < vals.length; i++) vals[i] = HALF[(hi[i] << 8) | lo[i]];  // two byte planes (html_data)
    } else {
      const raw = new Uint8Array(buf, E.offset, vals.length);
      const scale = new Float32Array(buf.slice(E.scale_offset, E.scale_offset + 4 * P.heads * nq));  // (H, rows)
      for (let h = 0; h < P.heads; h++) for (let r = 0; r < nq; r++) {
        const s = scale[h * nq + r], b = h * n + r * nk;
        for (let c = 0; c < nk; c++) vals[b + c] = raw[b + c] / 255 * s;
      }
    }
    E.vals = vals;
    E.mask = E.mask_offset !== undefined ? new Uint8Array(buf, E.mask_offset, n) : null;
  }
  P.shared = Math.max(...P.layers.map((E) => Math.max(...E.max)));
}
if (M.image) {  // a vision input's picture (S, S, 3) uint8, drawn under the patch grid
  const I = M.image, px = new Uint8Array(buf, I.offset, I.height * I.width * 3), rgba = new ImageData(I.width, I.height);
  for (let i = 0; i < I.height * I.width; i++) { rgba.data.set(px.subarray(3 * i, 3 * i + 3), 4 * i); rgba.data[4 * i + 3] = 255; }
  I.bitmap = document.createElement("canvas"); I.bitmap.width = I.width; I.bitmap.height = I.height;
  I.bitmap.getContext("2d").putImageData(rgba, 0, 0);
}
api.timings.unpacked = performance.now();
const LUT = M.lut, LAY = M.layout;  // the app's 256 RGBA colours: 0..254 the colour map, 255 masked
const st = {view: M.view, part: 0, layer: 0, head: 0, scale: "fixed", heads: null, hover: null};
const part = () => M.parts[st.part];
const entry = () => part().layers[st.layer];
function fmt(v) { return v === 0 || Math.abs(v) >= 1e-4 ? v.toFixed(6) : v.toExponential(3).replace(/e([+-])(\d)$/, (m, sign, d) => `e${sign}0${d}`); }
// as attnviz/text/token_display.py: byte-level BPE spells each byte as one character (a space Ġ, a newline Ċ,
// "’" as âĢĻ), SentencePiece writes a space as ▁; a label shows the text they stand for
function plain(t) {
  const cs = Array.from(t), B = byteOf();
  if (!/^[\x00-\x7f]*$/.test(t) && cs.every((c) => B.has(c))) {
    const raw = Uint8Array.from(cs, (c) => B.get(c));
    try { return new TextDecoder("utf-8", {fatal: true}).decode(raw); } catch (e) {
      if (cs.some((c) => c.codePointAt(0) >= 0x100 && c.codePointAt(0) < 0x144))  // part of a character
        return Array.from(raw, (b) => b < 0x80 ? String.fromCharCode(b) : `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`).join("");
    }
  }
  return t.replace(/[\u0120\u2581]/g, " ").replace(/\u010a/g, "\n");
}
function byteOf() {  // GPT-2's byte-to-character table, inverted: the 68 unprintable bytes moved to U+0100 on
  if (!plain.table) {
    const kept = [], table = new Map();
    for (let b = 0; b < 256; b++) if ((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174) kept.push(b);
    kept.forEach((b) => table.set(String.fromCharCode(b), b));
    let n = 0;
    for (let b = 0; b < 256; b++) if (!kept.includes(b)) table.set(String.fromCharCode(256 + n++), b);
    plain.table = table;
  }
  return plain.table;
}
function tok(t) {
  const p = plain(t);
  if (p.length > 1 && /^ +$/.test(p)) return p.length <= 3 ? "␣".repeat(p.length) : `␣×${p.length}`;  // indentation
  return ({" ": "␣", "\n": "⏎", "\t": "⇥", "": "∅"})[p] ?? p.replace(/^ +(?=\S)/, "").replace(/\n/g, "⏎").replace(/\t/g, "⇥")
    .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `<0x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}>`);
}
// the raw token on hover wherever the label differs from it by more than making whitespace visible
function tokHover(t) { return plain(t) === t && !/^ +\S/.test(t) ? tok(t) : `${tok(t)} (token “${t}”)`; }
function vmaxOf(E, h) { return st.scale === "fixed" ? 1 : st.scale === "per-map" ? E.max[h] : part().shared; }
function scaleNote() {
  return st.scale === "fixed" ? "fixed scale 0–1" : st.scale === "per-map" ? "scale: this head's maximum"
    : "one scale for all layers and heads";
}
function index(v, vmax) {  // heatmap_data.quantize, in float32 as numpy does
  const s = vmax > 0 ? Math.fround(254 / vmax) : 0;
  return Math.floor(Math.min(Math.max(Math.fround(v * s), 0), 254) + 0.5);
}
function sized(cv, w, h) {  // CSS size w×h, backing store × devicePixelRatio: crisp at any pixel density
  const dpr = window.devicePixelRatio || 1;
  cv.width = Math.round(w * dpr); cv.height = Math.round(h * dpr);
  cv.style.width = `${w}px`; cv.style.height = `${h}px`;
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}
function blockMax(E, h, nk, r0, r1, c0, c1) {  // [largest weight, every cell masked] of stored rows/cols
  let top = -1, allMasked = true;
  for (let i = r0; i < r1; i++) for (let j = c0; j < c1; j++) {
    const k = i * nk + j;
    if (E.mask && E.mask[k]) continue;
    allMasked = false;
    const v = E.vals[h * part().rows * nk + k];
    if (v > top) top = v;
  }
  return [top, allMasked];
}
function paintMap(E, h, nq, nk, vmax, out, pool) {
  // one map into ImageData ``out``: each pixel the maximum of a pool×pool block (a lone 1.0 never vanishes)
  const w = Math.ceil(nk / pool);
  for (let r = 0; r < Math.ceil(nq / pool); r++) for (let c = 0; c < w; c++) {
    const [top, allMasked] = blockMax(E, h, nk, r * pool, Math.min(nq, (r + 1) * pool), c * pool, Math.min(nk, (c + 1) * pool));
    const col = LUT[allMasked ? 255 : index(top, vmax)], p = (r * w + c) * 4;
    out.data[p] = col[0]; out.data[p + 1] = col[1]; out.data[p + 2] = col[2]; out.data[p + 3] = col[3];
  }
}
function colourBar(ctx, x, y, w, h, vmax, label) {
  for (let i = 0; i < h; i++) {
    // clamped: a fractional h (7 cells of 66.29 px) ran i / (h - 1) past 1, to LUT[-1] (undefined: the page stopped)
    const c = LUT[Math.max(0, Math.min(254, Math.round(254 * (1 - i / (h - 1)))))];
    ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`; ctx.fillRect(x, y + i, w, 1);
  }
  ctx.fillStyle = M.fg; ctx.font = "12px sans-serif"; ctx.textAlign = "left"; ctx.textBaseline = "middle";
  for (const f of [0, 0.2, 0.4, 0.6, 0.8, 1]) ctx.fillText((vmax * f).toPrecision(3).replace(/\.?0+$/, "") || "0", x + w + 4, y + h * (1 - f));
  ctx.save(); ctx.translate(x + w + 52, y + h / 2); ctx.rotate(-Math.PI / 2); ctx.textAlign = "center";
  ctx.fillText(label, 0, 0); ctx.restore();
}
function axisText(t) {  // an axis label in its 14 characters: an ellipsis says a label was cut; "(end): nothing written" → "(end)"
  if (t.length <= 14) return t;
  return t.startsWith("(end)") ? "(end)" : t.slice(0, 13) + "…";
}
api.axisLabel = axisText;  // what an axis draws for a label (for the tests)
function labels(ctx, names, at, step, font, vertical, x0) {
  ctx.font = `${font}px sans-serif`; ctx.fillStyle = M.fg; ctx.textBaseline = "middle";
  const every = Math.max(1, Math.ceil((font + 1) / step));
  for (let i = 0; i < names.length; i += every) {
    const t = axisText(tok(names[i]));
    if (vertical) { ctx.save(); ctx.translate(at(i), x0); ctx.rotate(-Math.PI / 2); ctx.textAlign = "right"; ctx.fillText(t, 0, 0); ctx.restore(); }
    else { ctx.textAlign = "right"; ctx.fillText(t, x0, at(i)); }
  }
}
function span(names, a, b) {  // positions a..b of a pooled axis, as hover text
  return a === b ? `${tokHover(names[a])} [${a}]` : `${tok(names[a])} … ${tok(names[b])} [${a}–${b}]`;
}
""" + r"""
const G = {};  // geometry of the drawn views, for hovers and the tests
""" + "VIEWS_SCRIPT_PLACEHOLDER" + r"""
})().catch((e) => { const n = document.getElementById("notice"); n.hidden = false; n.textContent = "cannot show the figure: " + e; });
"""

SCRIPT = SCRIPT.replace("VIEWS_SCRIPT_PLACEHOLDER", VIEWS_SCRIPT)
