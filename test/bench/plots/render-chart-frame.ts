/** Where a chart's plot area lies inside the SVG, in pixels. */
export interface PlotArea {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface ChartFrame {
  area: PlotArea;
  /** Pixel row of a y value (0 at the bottom of the plot area). */
  y(value: number): number;
  /** The frame's own elements: title, y grid and ticks, axis labels, legend. */
  parts: string[];
}

export const CHART_WIDTH = 720;
export const CHART_HEIGHT = 380;
/** Colour-blind-safe (Okabe–Ito), so a printed or projected report still tells the series apart. */
export const SERIES_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"];

export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A readable number for a tick or a bar label: no long tails of digits. */
export function formatTick(value: number): string {
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 10_000) return `${Number((value / 1000).toFixed(1))}k`;
  if (abs >= 100) return String(Math.round(value));
  if (abs >= 1) return String(Number(value.toFixed(1)));
  return String(Number(value.toPrecision(2)));
}

/** Step of 1, 2 or 5 × 10^k giving about five grid lines up to `max`. */
export function pickTickStep(max: number): number {
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  return step ?? 10 * magnitude;
}

/** Title, horizontal grid with y ticks from 0, axis labels and a legend; the caller draws the data. */
export function renderChartFrame(o: {
  title: string;
  yLabel: string;
  xLabel?: string;
  maxValue: number;
  legend: readonly string[];
}): ChartFrame {
  const area = { left: 72, top: 56, width: CHART_WIDTH - 72 - 24, height: CHART_HEIGHT - 56 - 64 };
  // Headroom above the tallest value keeps its label inside the plot.
  const safeMax = Number.isFinite(o.maxValue) && o.maxValue > 0 ? o.maxValue * 1.08 : 1;
  const step = pickTickStep(safeMax);
  const top = Math.ceil(safeMax / step) * step;
  const y = (value: number) => area.top + area.height - (Math.max(0, value) / top) * area.height;
  const parts = [
    `<text x="${CHART_WIDTH / 2}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(o.title)}</text>`,
  ];
  for (let tick = 0; tick <= top + step / 2; tick += step) {
    const row = y(tick).toFixed(1);
    parts.push(
      `<line x1="${area.left}" x2="${area.left + area.width}" y1="${row}" y2="${row}" stroke="#ddd"/>`,
      `<text x="${area.left - 8}" y="${row}" text-anchor="end" dominant-baseline="middle">${formatTick(tick)}</text>`,
    );
  }
  const midY = area.top + area.height / 2;
  parts.push(
    `<line x1="${area.left}" x2="${area.left}" y1="${area.top}" y2="${area.top + area.height}" stroke="#333"/>`,
    `<line x1="${area.left}" x2="${area.left + area.width}" y1="${area.top + area.height}" y2="${area.top + area.height}" stroke="#333"/>`,
    `<text x="18" y="${midY}" text-anchor="middle" transform="rotate(-90 18 ${midY})">${escapeXml(o.yLabel)}</text>`,
  );
  if (o.xLabel) {
    parts.push(
      `<text x="${area.left + area.width / 2}" y="${CHART_HEIGHT - 12}" text-anchor="middle">${escapeXml(o.xLabel)}</text>`,
    );
  }
  let legendX = area.left;
  o.legend.forEach((name, i) => {
    parts.push(
      `<rect x="${legendX}" y="36" width="12" height="12" fill="${SERIES_COLOURS[i % SERIES_COLOURS.length]}"/>`,
      `<text x="${legendX + 16}" y="46">${escapeXml(name)}</text>`,
    );
    legendX += 28 + name.length * 7;
  });
  return { area, y, parts };
}

/** The SVG document around a chart's elements; fixed size and font so the committed files diff cleanly. */
export function wrapSvgDocument(title: string, parts: readonly string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART_WIDTH}" height="${CHART_HEIGHT}" viewBox="0 0 ${CHART_WIDTH} ${CHART_HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...parts,
    "</svg>",
    "",
  ].join("\n");
}
