/**
 * GET /reports/settlement_detail_report_<YYYY-MM-DD>.csv: the sandbox card processor's settlement
 * report of one São Paulo day (CONTRACT §15), in the layout of Adyen's Settlement details report,
 * behind HTTP Basic with the PSP's client id and secret (Adyen's reports take a report user's Basic
 * credentials likewise). Streamed: a day of any size is never held whole.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { dayReport, saoPauloDay } from './card-settlements.ts';
import type { Db } from './sql.ts';

export const REPORTS_PATH = '/reports';

// Digests first: timingSafeEqual needs equal lengths, and the lengths must not leak either.
const same = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

function basicMatches(header: string | undefined, credentials: { clientId: string; clientSecret: string }): boolean {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const user = same(decoded.slice(0, colon), credentials.clientId);
  const pass = same(decoded.slice(colon + 1), credentials.clientSecret);
  return user && pass;
}

export function registerReportRoutes(app: FastifyInstance, deps: { db: Db; credentials: { clientId: string; clientSecret: string } }): void {
  app.get<{ Params: { file: string } }>(`${REPORTS_PATH}/:file`, async (request, reply) => {
    if (!basicMatches(request.headers.authorization, deps.credentials)) {
      return reply.status(401).header('www-authenticate', 'Basic realm="sandbox-psp reports"').type('text/plain').send('Unauthorized');
    }
    const day = /^settlement_detail_report_(\d{4}-\d{2}-\d{2})\.csv$/.exec(request.params.file)?.[1];
    const span = day === undefined ? null : saoPauloDay(day);
    if (!span || !day) return reply.status(404).type('text/plain').send('Not Found');
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${request.params.file}"`)
      .send(Readable.from(dayReport(deps.db, span, day.replaceAll('-', ''))));
  });
}
