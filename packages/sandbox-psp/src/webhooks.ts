/** Webhook registration: PUT, GET and DELETE /webhook/{chave}. */
import type { FastifyInstance } from 'fastify';
import { notFound, problem } from './problems.ts';
import type { Queryable } from './sql.ts';
import { maybeOne, run, sql } from './sql.ts';
import { iso } from './wire.ts';

export interface WebhookRow {
  chave: string;
  webhook_url: string;
  criacao: Date;
}

export async function findWebhook(q: Queryable, chave: string): Promise<WebhookRow | null> {
  return maybeOne(await run<WebhookRow>(q, sql`SELECT * FROM sandbox_psp.webhooks WHERE chave = ${chave}`));
}

/** Where the callback goes: `{webhookUrl}/pix`, without doubling a trailing slash. */
export function callbackUrl(webhookUrl: string): URL {
  const url = new URL(webhookUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/pix`;
  return url;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);
const isLoopback = (host: string) => LOOPBACK_HOSTS.has(host) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** The reason a webhook URL is refused, or null. Real PSPs take https only (and call back with mTLS). */
function webhookUrlProblem(text: unknown, allowHttp: boolean): string | null {
  if (typeof text !== 'string' || text.length > 2048) return 'O campo webhook.webhookUrl não respeita o schema.';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'O campo webhook.webhookUrl não é uma URL absoluta.';
  }
  if (url.username || url.password) return 'O campo webhook.webhookUrl não pode conter credenciais.';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && (allowHttp || isLoopback(url.hostname))) return null;
  return 'O campo webhook.webhookUrl deve usar https (http só para localhost neste sandbox).';
}

export interface WebhookRouteOptions {
  db: Queryable;
  receiverKey: string;
  receiverCnpj: string;
  allowHttp: boolean;
  now(): Date;
}

const webhookInvalido = (razao: string, propriedade: string) =>
  problem(
    400,
    'WebhookOperacaoInvalida',
    'Webhook inválido.',
    'A presente requisição busca criar um webhook sem respeitar o schema ou, ainda, apresenta semântica inválida.',
    [{ razao, propriedade }],
  );

const webhookNaoEncontrado = () => notFound('WebhookNaoEncontrado', 'O webhook denotado por {chave} não encontra-se estabelecido.');

export function registerWebhookRoutes(app: FastifyInstance, o: WebhookRouteOptions): void {
  app.put<{ Params: { chave: string }; Body: { webhookUrl?: unknown } }>(
    '/webhook/:chave',
    { config: { scope: 'webhook.write' } },
    async (request, reply) => {
      if (request.params.chave !== o.receiverKey) {
        throw webhookInvalido('O parâmetro {chave} não corresponde a uma chave DICT pertencente a este usuário recebedor.', 'chave');
      }
      const body = request.body as { webhookUrl?: unknown } | null;
      const reason = webhookUrlProblem(typeof body === 'object' && body !== null ? body.webhookUrl : undefined, o.allowHttp);
      if (reason) throw webhookInvalido(reason, 'webhook.webhookUrl');
      await run(
        o.db,
        sql`INSERT INTO sandbox_psp.webhooks (chave, webhook_url, criacao) VALUES (${o.receiverKey}, ${body!.webhookUrl as string}, ${o.now()})
          ON CONFLICT (chave) DO UPDATE SET webhook_url = excluded.webhook_url, criacao = excluded.criacao`,
      );
      return reply.status(200).send();
    },
  );

  app.get<{ Params: { chave: string } }>('/webhook/:chave', { config: { scope: 'webhook.read' } }, async (request) => {
    const row = await findWebhook(o.db, request.params.chave);
    if (!row) throw webhookNaoEncontrado();
    // The file's WebhookCompleto requires `cnpj` (the receiver's, it seems) where its example shows `chave`: both are sent.
    return { webhookUrl: row.webhook_url, chave: row.chave, cnpj: o.receiverCnpj, criacao: iso(row.criacao) };
  });

  app.delete<{ Params: { chave: string } }>('/webhook/:chave', { config: { scope: 'webhook.write' } }, async (request, reply) => {
    const r = await run(o.db, sql`DELETE FROM sandbox_psp.webhooks WHERE chave = ${request.params.chave}`);
    if (r.rowCount === 0) throw webhookNaoEncontrado();
    return reply.status(204).send();
  });
}
