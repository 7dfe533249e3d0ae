// One method per operation: every operationId of the OpenAPI document (sdk/openapi.json, what the
// gateway serves) is a method of the client its security scheme calls for, and every paged list has
// its iterator. Checked at compile time too (the generated `operations` against the two classes).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEDUPLICATED_POSTS } from '../src/client.ts';
import type * as T from '../src/index.ts';
import { OperatorClient, SellerClient } from '../src/index.ts';
import type { operations } from '../src/schema.ts';

// Compile time: an operationId without a method of the same name fails `tsc`.
type Missing = Exclude<keyof operations, keyof SellerClient | keyof OperatorClient>;
const everyOperationHasAMethod: [Missing] extends [never] ? true : Missing = true;

// Compile time: every named type resolves to a shape of the document (not never, not unknown).
type Real<X> = [X] extends [never] ? false : unknown extends X ? false : true;
type Named = [
  T.Balance,
  T.StatementPage,
  T.StatementLine,
  T.CreateCashoutBody,
  T.Cashout,
  T.Webhook,
  T.WebhookList,
  T.CreateWebhookBody,
  T.WebhookTestResult,
  T.NotificationsPage,
  T.Notification,
  T.ResendResult,
  T.CreateSaleBody,
  T.CreateSaleResponse,
  T.Sale,
  T.Transaction,
  T.TransactionsPage,
  T.TransactionsQuery,
  T.CancelResult,
  T.RefundBody,
  T.MedDefenseBody,
  T.Refund,
  T.RefundList,
  T.SigningSecret,
  T.SandboxPixPayBody,
  T.SandboxPix,
  T.PixReturnList,
  T.PixReturnsQuery,
  T.PanelInvite,
  T.CreateSellerBody,
  T.CreatedSeller,
  T.Seller,
  T.UpdateSellerBody,
  T.SellerKey,
  T.LedgerVerification,
  T.TransactionEventBody,
  T.Settings,
  T.UpdateSettingsBody,
  T.CashoutEventBody,
  T.CashoutEventResult,
  T.StatementQuery,
  T.NotificationsQuery,
];
const everyNamedTypeIsReal: { [K in keyof Named]: Real<Named[K]> } extends { [K in keyof Named]: true } ? true : false = true;

interface Operation {
  operationId: string;
  parameters?: { name?: string; in?: string }[];
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: { 'application/json'?: { schema?: { properties?: Record<string, unknown>; $ref?: string } } } }>;
}

const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
};
const operationList = Object.values(doc.paths).flatMap((methods) => Object.values(methods));

const isMethod = (proto: object, name: string) => typeof (proto as Record<string, unknown>)[name] === 'function';

test('every operationId is a method of the client its security calls for', () => {
  assert.equal(everyOperationHasAMethod, true);
  assert.equal(everyNamedTypeIsReal, true);
  assert.ok(operationList.length >= 31, `${operationList.length} operations`);
  for (const op of operationList) {
    const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
    const proto = schemes.includes('operator') ? OperatorClient.prototype : SellerClient.prototype;
    assert.ok(schemes.length > 0, `${op.operationId} has a security scheme`);
    assert.ok(isMethod(proto, op.operationId), `${proto.constructor.name}.${op.operationId}`);
  }
});

test('every paged list (an answer with nextCursor) has an iterator', () => {
  const paged = operationList.filter((op) => {
    const schema = op.responses['200']?.content?.['application/json']?.schema;
    const named = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
    return named?.properties && 'nextCursor' in named.properties;
  });
  assert.deepEqual(paged.map((op) => op.operationId).sort(), ['listNotifications', 'listProviderEvents', 'listStatement', 'listTransactions']);
  for (const op of paged) {
    const proto = op.security?.some((s) => 'operator' in s) ? OperatorClient.prototype : SellerClient.prototype;
    assert.ok(isMethod(proto, op.operationId.replace(/^list/, 'iterate')), op.operationId);
  }
});

test('the POSTs retried after an ambiguous failure are those the document says take an Idempotency-Key', () => {
  const declared = Object.entries(doc.paths)
    .filter(([, methods]) => methods.post?.parameters?.some((p) => p.in === 'header' && p.name?.toLowerCase() === 'idempotency-key'))
    .map(([path]) => path)
    .sort();
  assert.deepEqual([...DEDUPLICATED_POSTS].sort(), declared);
});
