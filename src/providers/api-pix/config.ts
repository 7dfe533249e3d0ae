/** CONTRACT §11.1's variables: the PIX rail and how the gateway reaches it and is reached by it. */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { checkSecret, type Env, fail, integer, nonEmpty, oneOf } from '../../config-values.ts';

export interface ApiPixConnection {
  baseUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM contents, read at start (a missing or unreadable file stops start-up). */
  cert: string;
  key: string;
  ca: string | undefined;
}

export interface ApiPixConfig {
  /** sandbox: the embedded PSP, reached through the same connector; api-pix: a real PSP. */
  provider: 'sandbox' | 'api-pix';
  /** Null with the sandbox (the embedded PSP hands out its own URL and credentials). */
  api: ApiPixConnection | null;
  /** Where the PSP reaches the gateway; null: this process's own address once it listens (sandbox only). */
  webhookBaseUrl: string | null;
  /** Part of the callback path, so that only the PSP that was told it can call it. */
  webhookSecret: string;
  reconcileSeconds: number;
  /**
   * Where MED is learnt (CONTRACT §11.5): from devoluções only, or from Efí's infractions API on the
   * PSP's host. The embedded PSP speaks it, so the sandbox reads it by default.
   */
  medSource: 'devolucoes' | 'efi';
  medPollSeconds: number;
  /** The embedded PSP's port (0: any free one). */
  sandboxPspPort: number;
}

export function loadApiPixConfig(env: Env, postbackSecret: string): ApiPixConfig {
  const provider = oneOf(env, 'PIX_PROVIDER', ['sandbox', 'api-pix'] as const, 'sandbox');
  const webhookSecret =
    nonEmpty(env.PIX_WEBHOOK_SECRET) ??
    // Derived when not given: every process of this gateway (api and worker roles) agrees on it.
    createHmac('sha256', postbackSecret).update('pix-webhook-path-v1').digest('base64url');
  checkSecret('PIX_WEBHOOK_SECRET', webhookSecret);
  if (!/^[A-Za-z0-9_-]+$/.test(webhookSecret)) fail('PIX_WEBHOOK_SECRET', 'must be letters, digits, - or _ (it is part of a URL path)');
  const webhookBaseUrl = nonEmpty(env.PIX_WEBHOOK_BASE_URL) ?? null;
  if (webhookBaseUrl !== null) checkUrl('PIX_WEBHOOK_BASE_URL', webhookBaseUrl, provider === 'api-pix');
  if (provider === 'api-pix' && webhookBaseUrl === null) fail('PIX_WEBHOOK_BASE_URL', 'is required with PIX_PROVIDER=api-pix');
  return {
    provider,
    api: provider === 'api-pix' ? apiConnection(env) : null,
    webhookBaseUrl: webhookBaseUrl?.replace(/\/+$/, '') ?? null,
    webhookSecret,
    reconcileSeconds: integer(env, 'PIX_RECONCILE_SECONDS', 60, 5, 86_400),
    medSource: oneOf(env, 'PIX_MED_SOURCE', ['devolucoes', 'efi'] as const, provider === 'sandbox' ? 'efi' : 'devolucoes'),
    medPollSeconds: integer(env, 'MED_POLL_SECONDS', 300, 5, 86_400),
    sandboxPspPort: integer(env, 'SANDBOX_PSP_PORT', 0, 0, 65535),
  };
}

function apiConnection(env: Env): ApiPixConnection {
  const required = (name: string) => nonEmpty(env[name]) ?? fail(name, 'is required with PIX_PROVIDER=api-pix');
  const baseUrl = required('PIX_API_BASE_URL');
  const tokenUrl = required('PIX_API_TOKEN_URL');
  checkUrl('PIX_API_BASE_URL', baseUrl, true);
  checkUrl('PIX_API_TOKEN_URL', tokenUrl, true);
  const caFile = nonEmpty(env.PIX_API_CA_FILE);
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    tokenUrl,
    clientId: required('PIX_API_CLIENT_ID'),
    clientSecret: required('PIX_API_CLIENT_SECRET'),
    cert: pem('PIX_API_CERT_FILE', required('PIX_API_CERT_FILE'), 'CERTIFICATE'),
    key: pem('PIX_API_KEY_FILE', required('PIX_API_KEY_FILE'), 'PRIVATE KEY'),
    ca: caFile ? pem('PIX_API_CA_FILE', caFile, 'CERTIFICATE') : undefined,
  };
}

/**
 * The API Pix is spoken over TLS only (the BCB's security manual); plain http only for the sandbox
 * or a PSP test double on this machine.
 */
export function checkUrl(name: string, value: string, httpsOnly: boolean): void {
  const url = URL.canParse(value) ? new URL(value) : fail(name, `must be an absolute URL, got "${value}"`);
  const loopback = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/.test(url.hostname);
  if (url.protocol === 'https:' || (url.protocol === 'http:' && (!httpsOnly || loopback))) return;
  fail(name, `must be an https URL, got "${value}"`);
}

export function pem(name: string, file: string, kind: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    return fail(name, `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)} (${file})`);
  }
  if (!text.includes(`-----BEGIN `) || !text.includes(kind)) fail(name, `must be a PEM file holding a ${kind} (${file})`);
  return text;
}
