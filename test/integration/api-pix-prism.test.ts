// The connector against Prism serving the official API Pix file directly (no embedded PSP in between):
// Prism checks every request the connector sends against the file and says what it finds in the
// sl-violations header; a tap in front of it keeps those findings. The file's own answer examples
// break its schemas in places, so what the connector makes of Prism's answers is not the point here.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type ApiPixClient, createApiPixClient } from '../../src/providers/api-pix/client/api-pix-client.ts';
import { cobTxid } from '../../src/providers/api-pix/keys.ts';
import { prismCli, startPrism } from '../helpers/prism.ts';

interface Seen {
  request: string;
  status: number;
  violations: { location: string[]; message: string }[];
}

const prism = prismCli();
const E2E = 'E12345678202611221500abcdefghijk';

describe('the api-pix connector against Prism serving the official file', { skip: 'unavailable' in prism ? prism.unavailable : false }, () => {
  let server: Awaited<ReturnType<typeof startPrism>>;
  let tap: ReturnType<typeof createServer>;
  let client: ApiPixClient;
  const seen: Seen[] = [];

  before(async () => {
    server = await startPrism({ timeoutMs: 60_000 });
    const target = new URL(server.url);
    // The token endpoint is not in the file: the tap answers it; everything else goes to Prism.
    tap = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/oauth/token') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ access_token: 't', token_type: 'Bearer', expires_in: 3600 }));
          return;
        }
        const path = `${target.pathname.replace(/\/$/, '')}${req.url?.replace(/^\/api/, '')}`;
        const forward = httpRequest(
          { host: target.hostname, port: target.port, method: req.method, path, headers: req.headers, timeout: 10_000 },
          (answer) => {
            const header = answer.headers['sl-violations'];
            const violations = typeof header === 'string' ? JSON.parse(header) : [];
            seen.push({ request: `${req.method} ${req.url}`, status: answer.statusCode ?? 0, violations });
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        forward.on('error', () => res.writeHead(502).end());
        forward.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => tap.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(tap.address() as AddressInfo).port}`;
    client = createApiPixClient({ baseUrl: `${base}/api`, tokenUrl: `${base}/oauth/token`, clientId: 'id', clientSecret: 'secret' });
  });
  after(async () => {
    await client?.close();
    await new Promise((resolve) => tap?.close(resolve));
    await server?.close();
  });

  test('every operation the gateway uses: Prism finds nothing wrong with any request', async () => {
    const txid = cobTxid('prismtest000', null);
    // A CNPJ debtor: the file writes its CPF pattern as a regex literal ("/^\\d{11}$/") that no CPF
    // matches, and Prism reads it as written (our harness reads it without the slashes: API_PIX_ERRATA).
    const calls: [string, () => Promise<unknown>][] = [
      [
        'putCob',
        () =>
          client.putCob(txid, {
            calendario: { expiracao: 3600 },
            devedor: { cnpj: '11222333000181', nome: 'Loja Exemplo' },
            valor: { original: '150.00' },
            chave: '123e4567-e12b-12d1-a456-426655440000',
          }),
      ],
      ['getCob', () => client.getCob(txid)],
      ['patchCob', () => client.patchCob(txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' })],
      ['getPix', () => client.getPix(E2E)],
      ['listPix', () => client.listPix({ inicio: new Date('2026-11-22T00:00:00Z'), fim: new Date('2026-11-22T01:00:00Z') })],
      ['putDevolucao', () => client.putDevolucao(E2E, 'rf1', { valor: '50.00', natureza: 'ORIGINAL' })],
      ['getDevolucao', () => client.getDevolucao(E2E, 'rf1')],
      ['putWebhook', () => client.putWebhook('123e4567-e12b-12d1-a456-426655440000', 'https://gateway.example/providers/pix/s3cr3t')],
      ['getWebhook', () => client.getWebhook('123e4567-e12b-12d1-a456-426655440000')],
    ];
    for (const [name, call] of calls) {
      const before = seen.length;
      // Prism answers with the file's examples, some of which the connector rightly refuses to read.
      await call().catch(() => {});
      assert.ok(seen.length > before, `${name}: the request reached Prism`);
      for (const s of seen.slice(before)) {
        const requestFindings = s.violations.filter((v) => v.location[0] === 'request');
        assert.deepEqual(requestFindings, [], `${name}: ${s.request} (${s.status})`);
        assert.ok(s.status < 400 || s.status === 404, `${name}: ${s.request} answered ${s.status}: ${server.output().slice(-2000)}`);
      }
    }
  });
});
