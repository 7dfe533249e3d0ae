/**
 * The embedded PSP's MED 2.0 infractions over HTTP, as Efí's SDK describes them: every query is
 * parsed by MedListParamsSchema and every list by MedListResponseSchema (strict objects), every
 * defence by MedSubmitDefenseParamsSchema and MedSubmitDefenseBodySchema. The levers stand for the
 * payer's bank (opening, deciding). Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import type { Pix, SandboxPsp } from '@pagar/sandbox-psp';
import { MedListParamsSchema, MedListResponseSchema, MedSubmitDefenseBodySchema, MedSubmitDefenseParamsSchema } from 'sdk-node-apis-efi';
import { request } from 'undici';
import type { Db } from '../../src/db/db.ts';
import { migrate } from '../../src/db/migrate.ts';
import { openDb } from '../../src/db/open.ts';
import { freshDatabase, type TestDatabase } from '../helpers/databases.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

// The embedded PSP is a package loaded on demand, as the gateway loads it (providers/sandbox/embedded-psp.ts).
const { startSandboxPsp } = await import('@pagar/sandbox-psp');

const RECEIVER_KEY = '123e4567-e12b-12d1-a456-426655440000';
const RECEIVER_CNPJ = '11222333000181';
const CLIENT_ID = 'gateway-client';
const CLIENT_SECRET = 'sandbox-secret';
const DAY_MS = 24 * 3600 * 1000;
const WAIT_MS = 5_000;

// The PSP's clock, moved by hand: every time the PSP writes is read from it.
let nowMs = Date.parse('2026-03-02T15:00:00.000Z');
const clock = { now: () => new Date(nowMs) };
const tick = (ms = 1_000) => {
  nowMs += ms;
};
const nowIso = () => new Date(nowMs).toISOString();

let database: TestDatabase;
let db: Db;
let psp: SandboxPsp;
let receiver: Receiver;
let token: string;
let tokenAt = 0;
let txidSeq = 0;
const newTxid = () => `infractionTest${String(++txidSeq).padStart(4, '0')}${'x'.repeat(12)}`;

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field in the assertions
type Json = any;
type Infracao = ReturnType<typeof MedListResponseSchema.parse>['infracoes'][number];

async function call(method: 'GET' | 'POST' | 'PUT', url: string, o: { body?: unknown; bearer?: string | null } = {}) {
  const headers: Record<string, string> = {};
  const bearer = o.bearer === undefined ? await currentToken() : o.bearer;
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(url, { method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
  const text = await res.body.text();
  return { status: res.statusCode, body: (text ? JSON.parse(text) : undefined) as Json, contentType: String(res.headers['content-type'] ?? '') };
}

async function fetchToken(scope?: string): Promise<string> {
  const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
  const form = `grant_type=client_credentials${scope ? `&scope=${encodeURIComponent(scope)}` : ''}`;
  const res = await request(psp.tokenUrl, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  const body = (await res.body.json()) as { access_token: string };
  assert.equal(res.statusCode, 200, `token: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** Tokens expire by the PSP's clock, which the tests move by days: one is fetched again after half an hour. */
async function currentToken(): Promise<string> {
  if (nowMs - tokenAt > 1_800_000) {
    token = await fetchToken();
    tokenAt = nowMs;
  }
  return token;
}

interface Page {
  inicio: string;
  fim: string;
  page?: number;
  perPage?: number;
}

/** The query as the SDK builds it (numbers), checked by its schema, then written as a query string. */
function listUrl(p: Page): string {
  const params = MedListParamsSchema.parse({
    inicio: p.inicio,
    fim: p.fim,
    ...(p.page === undefined ? {} : { 'paginacao.paginaAtual': p.page }),
    ...(p.perPage === undefined ? {} : { 'paginacao.itensPorPagina': p.perPage }),
  });
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  return `${psp.efiUrl}/v2/gn/infracoes?${query}`;
}

/** GET /v2/gn/infracoes, its answer parsed by the SDK's strict schema. */
async function list(p: Page): Promise<ReturnType<typeof MedListResponseSchema.parse>> {
  const res = await call('GET', listUrl(p));
  assert.equal(res.status, 200, `GET /v2/gn/infracoes: ${JSON.stringify(res.body)}`);
  return MedListResponseSchema.parse(res.body);
}

/** The one infraction of an id, read back through the list of the whole day. */
async function infraction(idInfracao: string): Promise<Infracao> {
  const all = await list({ inicio: '2000-01-01T00:00:00Z', fim: '2100-01-01T00:00:00Z', perPage: 1000 });
  const found = all.infracoes.find((i) => i.idInfracao === idInfracao);
  assert.ok(found, `infraction ${idInfracao} is listed`);
  return found;
}

/** POST /v2/gn/infracoes/{idInfracao}/defesa with a body the SDK accepts (unless `raw`). */
async function defend(idInfracao: string, body: unknown, raw = false) {
  const params = raw ? { idInfracao } : MedSubmitDefenseParamsSchema.parse({ idInfracao });
  const checked = raw ? body : MedSubmitDefenseBodySchema.parse(body);
  return call('POST', `${psp.efiUrl}/v2/gn/infracoes/${encodeURIComponent(params.idInfracao)}/defesa`, { body: checked });
}

function assertProblem(res: { status: number; body: Json; contentType: string }, status: number, tipo: string, propriedade?: string) {
  assert.equal(res.status, status, `expected ${status} ${tipo}, got ${res.status} ${JSON.stringify(res.body)}`);
  assert.match(res.contentType, /^application\/problem\+json/);
  assert.equal(res.body.type, `https://pix.bcb.gov.br/api/v2/error/${tipo}`);
  assert.equal(res.body.status, status);
  if (propriedade)
    assert.deepEqual(
      res.body.violacoes?.map((v: { propriedade: string }) => v.propriedade),
      [propriedade],
    );
}

/** A Pix received for a charge made through the API Pix. */
async function pixOfCob(original: string, cents: number): Promise<Pix> {
  const txid = newTxid();
  const cob = await call('PUT', `${psp.apiUrl}/cob/${txid}`, { body: { calendario: { expiracao: 3600 }, valor: { original }, chave: RECEIVER_KEY } });
  assert.equal(cob.status, 201, JSON.stringify(cob.body));
  tick();
  return psp.pay(txid, cents, { pagador: { cpf: '52998224725' } });
}

const pixRead = async (e2eid: string): Promise<Pix> => (await call('GET', `${psp.apiUrl}/pix/${e2eid}`)).body as Pix;

before(async () => {
  database = await freshDatabase();
  db = await openDb(database.url, tmpdir());
  await migrate(db);
  receiver = await startReceiver();
  psp = await startSandboxPsp({
    db,
    receiverKey: RECEIVER_KEY,
    receiverCnpj: RECEIVER_CNPJ,
    merchantName: 'Loja Sandbox',
    merchantCity: 'São Paulo',
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    clock,
    devolucaoDelayMs: 60_000,
    callbackRetryDelaysMs: [20, 40],
  });
  const hook = await call('PUT', `${psp.apiUrl}/webhook/${RECEIVER_KEY}`, { body: { webhookUrl: receiver.url('/hooks') } });
  assert.equal(hook.status, 200, JSON.stringify(hook.body));
});

after(async () => {
  await psp?.close();
  await receiver?.close();
  await db?.close();
  await database?.drop();
});

describe('GET /v2/gn/infracoes', () => {
  test('an infraction opened on a Pix received is listed as the SDK describes it, its times from the PSP clock', async () => {
    const pix = await pixOfCob('147.02', 14_702);
    tick(60_000);
    const openedAt = nowIso();
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    tick();
    const page = await list({ inicio: openedAt, fim: nowIso() });
    assert.deepEqual(page.parametros, {
      inicio: openedAt,
      fim: nowIso(),
      paginacao: { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 },
    });
    const [item] = page.infracoes;
    assert.ok(item);
    assert.equal(item.idInfracao, idInfracao);
    assert.equal(item.endToEndId, pix.endToEndId);
    assert.equal(item.valor, 147.02);
    assert.equal(item.dataTransacao, pix.horario);
    assert.equal(item.chave, RECEIVER_KEY);
    assert.equal(item.status, 'ABERTA');
    assert.equal(item.razao, 'Golpe do falso vendedor relatado pelo pagador');
    assert.equal(item.tipoSituacao, 'golpe');
    assert.ok(Number.isSafeInteger(item.protocolo) && item.protocolo > 0, `protocolo ${item.protocolo}`);
    assert.equal(item.identificadorTicket.length, 1);
    assert.deepEqual(item.dadosAnalise, { abertura: openedAt, prazoFinalizacao: new Date(Date.parse(openedAt) + 7 * DAY_MS).toISOString() });
    assert.equal(item.criadoEm, openedAt);
    assert.equal(item.atualizadoEm, openedAt);
    assert.equal(item.defesa, undefined);
    assert.equal(item.justificativaAnalista, undefined);
    assert.equal(item.origem.documento, '52998224725', 'the payer known by the document its Pix came with');
    assert.deepEqual({ nome: item.destino.nome, documento: item.destino.documento }, { nome: 'Loja Sandbox', documento: RECEIVER_CNPJ });
    const empty = await list({ inicio: nowIso(), fim: nowIso() });
    assert.deepEqual(empty.infracoes, []);
    assert.equal(empty.parametros.paginacao.quantidadeTotalDeItens, 0);
  });

  test('25 infractions, 10 a page: 3 pages, ordered by creation, none twice (ties broken by sequence)', async () => {
    tick(60_000);
    const inicio = nowIso();
    const opened: string[] = [];
    for (let i = 0; i < 25; i++) {
      const pix = await psp.pay(`pagingTest${i}`, 100 + i);
      // Every fifth opened at a time of its own; the others share theirs, so pages cut through ties.
      if (i % 5 === 0) tick();
      opened.push((await psp.openInfraction(pix.endToEndId, { razao: `Infração ${i}` })).idInfracao);
    }
    const fim = nowIso();
    tick();
    await psp.openInfraction((await psp.pay('pagingAfter', 100)).endToEndId);
    const pages = [];
    for (let page = 0; page < 4; page++) pages.push(await list({ inicio, fim, page, perPage: 10 }));
    assert.deepEqual(
      pages.map((p) => p.infracoes.length),
      [10, 10, 5, 0],
    );
    for (const [i, p] of pages.entries()) {
      assert.deepEqual(p.parametros.paginacao, { paginaAtual: i, itensPorPagina: 10, quantidadeDePaginas: 3, quantidadeTotalDeItens: 25 });
    }
    const seen = pages.flatMap((p) => p.infracoes);
    assert.deepEqual(
      seen.map((i) => i.idInfracao),
      opened,
      'every one once, in the order opened',
    );
    assert.deepEqual(
      seen.map((i) => i.razao),
      opened.map((_, i) => `Infração ${i}`),
    );
  });

  test('a bad query is a 400 problem naming the parameter', async () => {
    const base = `${psp.efiUrl}/v2/gn/infracoes`;
    const inicio = encodeURIComponent('2026-03-01T00:00:00Z');
    const fim = encodeURIComponent('2026-03-02T00:00:00Z');
    const cases: [string, string][] = [
      [`fim=${fim}`, 'inicio'],
      [`inicio=${inicio}`, 'fim'],
      [`inicio=2026-03-01&fim=${fim}`, 'inicio'],
      [`inicio=${fim}&fim=${inicio}`, 'fim'],
      [`inicio=${inicio}&fim=${fim}&paginacao.itensPorPagina=0`, 'paginacao.itensPorPagina'],
      [`inicio=${inicio}&fim=${fim}&paginacao.itensPorPagina=1001`, 'paginacao.itensPorPagina'],
      [`inicio=${inicio}&fim=${fim}&paginacao.paginaAtual=-1`, 'paginacao.paginaAtual'],
      [`inicio=${inicio}&fim=${fim}&paginacao.paginaAtual=x`, 'paginacao.paginaAtual'],
      [`inicio=${inicio}&inicio=${inicio}&fim=${fim}`, 'inicio'],
    ];
    for (const [query, propriedade] of cases) {
      assertProblem(await call('GET', `${base}?${query}`), 400, 'InfracaoConsultaInvalida', propriedade);
    }
    const max = await list({ inicio: '2026-03-01T00:00:00Z', fim: '2026-03-02T00:00:00Z', page: 0, perPage: 1000 });
    assert.equal(max.parametros.paginacao.itensPorPagina, 1000);
  });

  test('a bearer token is needed (401), with the MED scope (403)', async () => {
    const url = listUrl({ inicio: '2026-03-01T00:00:00Z', fim: '2026-03-02T00:00:00Z' });
    for (const bearer of [null, 'garbage']) {
      const res = await call('GET', url, { bearer });
      assert.equal(res.status, 401);
      assert.match(res.contentType, /^application\/problem\+json/);
      const post = await call('POST', `${psp.efiUrl}/v2/gn/infracoes/x/defesa`, { body: { analise: 'rejeitado', justificativa: 'x' }, bearer });
      assert.equal(post.status, 401);
    }
    const readOnly = await fetchToken('pix.read');
    assertProblem(await call('GET', url, { bearer: readOnly }), 403, 'AcessoNegado');
    const medRead = await fetchToken('gn.infractions.read');
    assert.equal((await call('GET', url, { bearer: medRead })).status, 200);
    const body = { analise: 'rejeitado', justificativa: 'x' };
    assertProblem(await call('POST', `${psp.efiUrl}/v2/gn/infracoes/x/defesa`, { body, bearer: medRead }), 403, 'AcessoNegado');
  });
});

describe('POST /v2/gn/infracoes/{idInfracao}/defesa', () => {
  test('a defence of an infraction ABERTA makes it EM_DEFESA; a second one is a 409', async () => {
    const pix = await pixOfCob('50.00', 5_000);
    tick();
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    tick(3_600_000);
    const justificativa = 'O produto foi entregue: rastreio BR123456789BR, assinado pelo comprador.';
    const res = await defend(idInfracao, { analise: 'rejeitado', justificativa });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const answered = MedListResponseSchema.shape.infracoes.element.parse(res.body);
    assert.equal(answered.status, 'EM_DEFESA');
    assert.equal(answered.defesa, justificativa);
    assert.equal(answered.dadosAnalise.recebimentoDefesa, nowIso());
    assert.equal(answered.atualizadoEm, nowIso());
    assert.notEqual(answered.criadoEm, nowIso());
    assert.deepEqual(await infraction(idInfracao), answered, 'the answer is the infraction as listed');
    tick();
    const again = await defend(idInfracao, { analise: 'rejeitado', justificativa: 'de novo' });
    assertProblem(again, 409, 'InfracaoNaoAberta');
    assert.equal(again.body.detail, 'A infração não está aberta (status EM_DEFESA).');
    assert.deepEqual(await infraction(idInfracao), answered, 'unchanged');
  });

  test('an unknown infraction is a 404; a body the SDK would not send is a 400 naming the field', async () => {
    assertProblem(await defend('00000000-0000-0000-0000-000000000000', { analise: 'rejeitado', justificativa: 'x' }), 404, 'InfracaoNaoEncontrada');
    const pix = await psp.pay(newTxid(), 700);
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    const cases: [unknown, string][] = [
      [{ analise: 'aceito', justificativa: 'x' }, 'analise'],
      [{ justificativa: 'x' }, 'analise'],
      [{ analise: 'rejeitado' }, 'justificativa'],
      [{ analise: 'rejeitado', justificativa: '' }, 'justificativa'],
      [{ analise: 'rejeitado', justificativa: 'x'.repeat(5001) }, 'justificativa'],
      [{ analise: 'rejeitado', justificativa: 7 }, 'justificativa'],
      [{ analise: 'rejeitado', justificativa: 'x', anexos: [] }, 'anexos'],
      [['rejeitado'], 'defesa'],
    ];
    // The SDK's schema refuses each of them too, but for the length of the justification (the PSP's own limits).
    const byLength = new Set<unknown>([cases[3]![0], cases[4]![0]]);
    for (const [body, propriedade] of cases) {
      assert.equal(MedSubmitDefenseBodySchema.safeParse(body).success, byLength.has(body), `the SDK on ${JSON.stringify(body).slice(0, 80)}`);
      assertProblem(await defend(idInfracao, body, true), 400, 'InfracaoDefesaInvalida', propriedade);
    }
    assert.equal((await infraction(idInfracao)).status, 'ABERTA');
    const longest = await defend(idInfracao, { analise: 'rejeitado', justificativa: 'x'.repeat(5000) });
    assert.equal(longest.status, 200);
  });

  test('refuseNextDefenses: the next defences answer 400 and change nothing; a 404 takes no refusal', async () => {
    const pix = await psp.pay(newTxid(), 900);
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    const before = await infraction(idInfracao);
    psp.refuseNextDefenses(2);
    assertProblem(await defend('no-such-infraction', { analise: 'rejeitado', justificativa: 'x' }), 404, 'InfracaoNaoEncontrada');
    for (let i = 0; i < 2; i++) {
      tick();
      const refused = await defend(idInfracao, { analise: 'rejeitado', justificativa: 'Entregue.' });
      assertProblem(refused, 400, 'InfracaoDefesaRecusada');
      assert.equal(refused.body.detail, 'Defesa recusada: prazo de análise encerrado (falha simulada pelo sandbox).');
      assert.deepEqual(await infraction(idInfracao), before, 'unchanged');
    }
    const accepted = await defend(idInfracao, { analise: 'rejeitado', justificativa: 'Entregue.' });
    assert.equal(accepted.status, 200);
    assert.equal(accepted.body.status, 'EM_DEFESA');
    assert.throws(() => psp.refuseNextDefenses(-1), RangeError);
  });
});

describe('the payer’s bank decides', () => {
  test('REJEITADA after a defence: final, the defence kept, no devolução; the Pix may be contested again', async () => {
    const pix = await pixOfCob('30.00', 3_000);
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    await assert.rejects(psp.openInfraction(pix.endToEndId), (e: Error & { statusCode?: number }) => e.statusCode === 409);
    tick();
    assert.equal((await defend(idInfracao, { analise: 'rejeitado', justificativa: 'Serviço prestado.' })).status, 200);
    tick(DAY_MS);
    await psp.resolveInfraction(idInfracao, 'REJEITADA');
    const decided = await infraction(idInfracao);
    assert.equal(decided.status, 'REJEITADA');
    assert.equal(decided.defesa, 'Serviço prestado.');
    assert.equal(decided.dadosAnalise.finalizacao, nowIso());
    assert.equal(decided.atualizadoEm, nowIso());
    assert.ok(decided.justificativaAnalista);
    assert.equal((await pixRead(pix.endToEndId)).devolucoes, undefined);
    await assert.rejects(psp.resolveInfraction(idInfracao, 'ACEITA'), (e: Error & { statusCode?: number }) => e.statusCode === 409);
    assertProblem(await defend(idInfracao, { analise: 'rejeitado', justificativa: 'x' }), 409, 'InfracaoNaoAberta');
    const second = await psp.openInfraction(pix.endToEndId, { razao: 'Nova contestação' });
    assert.notEqual(second.idInfracao, idInfracao);
    await psp.resolveInfraction(second.idInfracao, 'CANCELADA_EFI');
    assert.equal((await infraction(second.idInfracao)).status, 'CANCELADA_EFI');
  });

  test('ACEITA: what is left of the Pix goes back as a MED_FRAUDE devolução, DEVOLVIDO, and the gateway is called back', async () => {
    const pix = await pixOfCob('80.00', 8_000);
    await psp.devolveByHand(pix.endToEndId, 1_000);
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    tick();
    await psp.resolveInfraction(idInfracao, 'ACEITA');
    assert.equal((await infraction(idInfracao)).status, 'ACEITA');
    const devolucoes = (await pixRead(pix.endToEndId)).devolucoes ?? [];
    assert.deepEqual(
      devolucoes.map((d) => [d.natureza, d.valor, d.status]),
      [
        ['ORIGINAL', '10.00', 'DEVOLVIDO'],
        ['MED_FRAUDE', '70.00', 'DEVOLVIDO'],
      ],
    );
    assert.equal(devolucoes[1]!.horario.liquidacao, nowIso());
    await receiver.waitFor(
      () =>
        receiver
          .requestsTo('/hooks/pix')
          .some((r) =>
            JSON.parse(r.body.toString('utf8')).pix.some(
              (p: Pix) => p.endToEndId === pix.endToEndId && p.devolucoes?.some((d) => d.natureza === 'MED_FRAUDE'),
            ),
          ),
      WAIT_MS,
      'the MED devolução called back',
    );
  });

  test('ACEITA on a Pix given back whole makes no devolução; withoutDevolucao makes none either', async () => {
    const whole = await psp.pay(newTxid(), 2_500);
    await psp.devolveByHand(whole.endToEndId, 2_500);
    const a = await psp.openInfraction(whole.endToEndId);
    await psp.resolveInfraction(a.idInfracao, 'ACEITA');
    assert.deepEqual(
      (await pixRead(whole.endToEndId)).devolucoes?.map((d) => d.natureza),
      ['ORIGINAL'],
    );
    const kept = await psp.pay(newTxid(), 4_000);
    const b = await psp.openInfraction(kept.endToEndId);
    await psp.resolveInfraction(b.idInfracao, 'ACEITA', { withoutDevolucao: true });
    assert.equal((await infraction(b.idInfracao)).status, 'ACEITA');
    assert.equal((await pixRead(kept.endToEndId)).devolucoes, undefined);
  });

  test('the levers refuse what the payer’s bank could not do', async () => {
    await assert.rejects(psp.openInfraction(`E12345678202603021500${'0'.repeat(11)}`), (e: Error & { statusCode?: number }) => e.statusCode === 404);
    await assert.rejects(psp.resolveInfraction('no-such-infraction', 'ACEITA'), (e: Error & { statusCode?: number }) => e.statusCode === 404);
    const pix = await psp.pay(newTxid(), 100);
    const { idInfracao } = await psp.openInfraction(pix.endToEndId);
    await assert.rejects(psp.resolveInfraction(idInfracao, 'ABERTA' as 'ACEITA'), RangeError);
    await assert.rejects(psp.openInfraction(pix.endToEndId, { razao: '' }), RangeError);
  });
});

describe('many infractions', () => {
  test('10,000 infractions read in 10 pages of 1,000: each page whole, none twice', async () => {
    // Written straight into the PSP's tables (opening 10,000 through the lever would take minutes on
    // PGlite): three infractions a second, so pages cut through ties.
    await db.query(
      `INSERT INTO sandbox_psp.pix (end_to_end_id, txid, valor_cents, chave, horario)
       SELECT 'E12345678202701011200' || lpad(i::text, 11, '0'), 'bulk' || i, 100 + i, $1, timestamptz '2027-01-01T12:00:00Z' + i * interval '1 second'
       FROM generate_series(1, 10000) i`,
      [RECEIVER_KEY],
    );
    await db.query(
      `INSERT INTO sandbox_psp.infractions (id_infracao, end_to_end_id, status, razao, abertura, prazo, criado_em, atualizado_em)
       SELECT 'bulk-' || i, 'E12345678202701011200' || lpad(i::text, 11, '0'), 'ABERTA', 'Golpe', t, t + interval '7 days', t, t
       FROM generate_series(1, 10000) i, LATERAL (SELECT timestamptz '2027-01-01T13:00:00Z' + (i / 3) * interval '1 second' AS t) x`,
    );
    const window = { inicio: '2027-01-01T00:00:00Z', fim: '2027-01-02T00:00:00Z', perPage: 1000 };
    const started = performance.now();
    const pages = [];
    for (let page = 0; page < 10; page++) pages.push(await list({ ...window, page }));
    const elapsedMs = performance.now() - started;
    assert.ok(
      pages.every((p) => p.infracoes.length === 1000 && p.parametros.paginacao.quantidadeDePaginas === 10),
      'ten whole pages',
    );
    const ids = pages.flatMap((p) => p.infracoes.map((i) => i.idInfracao));
    assert.deepEqual(
      ids,
      Array.from({ length: 10_000 }, (_, i) => `bulk-${i + 1}`),
      'every one once, in the order made',
    );
    assert.equal(pages[9]!.infracoes[999]!.valor, 101.0);
    // Generous: a page is one indexed statement (measured well under a second on PGlite).
    assert.ok(elapsedMs < 20_000, `ten pages of 1,000 took ${Math.round(elapsedMs)} ms`);
  });
});
