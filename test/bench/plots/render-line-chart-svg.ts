import {
  escapeXml,
  formatTick,
  renderChartFrame,
  SERIES_COLOURS,
  wrapSvgDocument,
} from "./render-chart-frame.ts";

export interface LineChart {
  title: string;
  xLabel: string;
  yLabel: string;
  /** A log x axis, for sizes spread over decades (10 … 5,000 turns). */
  logX?: boolean;
  series: ReadonlyArray<{ name: string; points: ReadonlyArray<readonly [number, number]> }>;
}

/** Lines with a marker per measured point; x ticks sit at the measured x values, which are few. */
export function renderLineChartSvg(chart: LineChart): string {
  const points = chart.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x + y));
  const frame = renderChartFrame({
    title: chart.title,
    xLabel: chart.xLabel,
    yLabel: chart.yLabel,
    maxValue: Math.max(0, ...points.map(([, y]) => y)),
    legend: chart.series.map((s) => s.name),
  });
  const { area } = frame;
  const scale = (x: number) => (chart.logX ? Math.log10(Math.max(x, Number.MIN_VALUE)) : x);
  const xs = [...new Set(points.map(([x]) => x))].sort((a, b) => a - b);
  const low = scale(xs[0] ?? 0);
  const high = scale(xs[xs.length - 1] ?? 1);
  const span = high - low || 1;
  // Inset from both ends so the first and last points and their labels stay clear of the axis and the edge; a
  // single x value sits in the middle.
  const inset = 40;
  const x = (value: number) =>
    xs.length < 2
      ? area.left + area.width / 2
      : area.left + inset + ((scale(value) - low) / span) * (area.width - 2 * inset);
  const parts = [...frame.parts];
  for (const value of xs) {
    parts.push(
      `<text x="${x(value).toFixed(1)}" y="${area.top + area.height + 18}" text-anchor="middle">${escapeXml(formatTick(value))}</text>`,
    );
  }
  chart.series.forEach((series, s) => {
    const colour = SERIES_COLOURS[s % SERIES_COLOURS.length];
    const drawn = series.points.filter(([px, py]) => Number.isFinite(px + py));
    const path = drawn.map(([px, py]) => `${x(px).toFixed(1)},${frame.y(py).toFixed(1)}`).join(" ");
    parts.push(`<polyline points="${path}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    for (const [px, py] of drawn) {
      parts.push(
        `<circle cx="${x(px).toFixed(1)}" cy="${frame.y(py).toFixed(1)}" r="3.5" fill="${colour}"/>`,
        `<text x="${(x(px) + 5).toFixed(1)}" y="${(frame.y(py) - 6).toFixed(1)}" font-size="10" fill="${colour}">${formatTick(py)}</text>`,
      );
    }
  });
  return wrapSvgDocument(chart.title, parts);
}
