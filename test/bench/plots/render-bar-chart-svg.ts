import {
  escapeXml,
  formatTick,
  renderChartFrame,
  SERIES_COLOURS,
  wrapSvgDocument,
} from "./render-chart-frame.ts";

export interface BarChart {
  title: string;
  yLabel: string;
  categories: readonly string[];
  /** One value per category, in `categories` order. */
  series: ReadonlyArray<{ name: string; values: readonly number[] }>;
}

/** Grouped bars: one group per category, one bar per series, each labelled with its value. */
export function renderBarChartSvg(chart: BarChart): string {
  const maxValue = Math.max(0, ...chart.series.flatMap((s) => s.values.filter(Number.isFinite)));
  const frame = renderChartFrame({
    title: chart.title,
    yLabel: chart.yLabel,
    maxValue,
    legend: chart.series.map((s) => s.name),
  });
  const { area } = frame;
  const groupWidth = area.width / Math.max(1, chart.categories.length);
  const barWidth = (groupWidth * 0.8) / Math.max(1, chart.series.length);
  const parts = [...frame.parts];
  chart.categories.forEach((category, c) => {
    const groupLeft = area.left + c * groupWidth + groupWidth * 0.1;
    chart.series.forEach((series, s) => {
      const value = series.values[c] ?? Number.NaN;
      const x = groupLeft + s * barWidth;
      const top = frame.y(Number.isFinite(value) ? value : 0);
      const bottom = area.top + area.height;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${(bottom - top).toFixed(1)}" fill="${SERIES_COLOURS[s % SERIES_COLOURS.length]}"/>`,
        `<text x="${(x + barWidth / 2 - 1).toFixed(1)}" y="${(top - 4).toFixed(1)}" text-anchor="middle" font-size="10">${Number.isFinite(value) ? formatTick(value) : "n/a"}</text>`,
      );
    });
    parts.push(
      `<text x="${(area.left + (c + 0.5) * groupWidth).toFixed(1)}" y="${area.top + area.height + 18}" text-anchor="middle">${escapeXml(category)}</text>`,
    );
  });
  return wrapSvgDocument(chart.title, parts);
}
