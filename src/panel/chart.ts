/** The Início chart: paid sales per day over 30 days, as an inline SVG (no script, readable with CSS off). */
import { dayOf, reais } from './format.ts';

export interface DayTotal {
  day: Date;
  cents: number;
}

const width = 600;
const height = 160;
const top = 10;
const bottom = 20;

export function salesChartSvg(days: DayTotal[]): string {
  const max = Math.max(1, ...days.map((d) => d.cents));
  const slot = width / Math.max(1, days.length);
  const bars = days
    .map((d, i) => {
      const h = Math.round(((height - top - bottom) * d.cents) / max);
      const x = Math.round(i * slot + slot * 0.15);
      const label = `${dayOf(d.day)}: ${reais(d.cents)}`;
      return `<rect x="${x}" y="${height - bottom - h}" width="${Math.max(1, Math.round(slot * 0.7))}" height="${h}"><title>${label}</title></rect>`;
    })
    .join('');
  const first = days[0] ? dayOf(days[0].day) : '';
  const last = days.at(-1) ? dayOf(days.at(-1)!.day) : '';
  const total = reais(days.reduce((s, d) => s + d.cents, 0));
  return `<svg role="img" aria-label="Vendas pagas por dia nos últimos 30 dias: ${total} no total" viewBox="0 0 ${width} ${height}" class="grafico">${bars}<text x="0" y="${height - 4}">${first}</text><text x="${width}" y="${height - 4}" text-anchor="end">${last}</text></svg>`;
}
