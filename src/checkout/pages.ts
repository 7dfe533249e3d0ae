/**
 * The shopper-facing pages of 3-D Secure, in Portuguese, without JavaScript of their own beyond the
 * one line that submits the issuer's form (a "Continuar" button does it without), under a strict
 * Content-Security-Policy: nothing loads from anywhere, and a form may go only to the issuer.
 */
import { createHash } from 'node:crypto';
import type { ShopperAction } from '../providers/ports.ts';

const escaped = (text: string) => text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const style =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1a1a1a;background:#f6f7f9}' +
  'main{max-width:32rem;margin:3rem auto;padding:1.5rem;background:#fff;border-radius:8px}' +
  'h1{font-size:1.375rem;margin:0 0 .75rem}' +
  'button{font:inherit;padding:.75rem 1.25rem;border:0;border-radius:6px;background:#0b5cad;color:#fff;cursor:pointer;min-height:44px}' +
  'button.secondary{background:#5a5f66}.actions{display:flex;gap:.75rem;flex-wrap:wrap;margin-top:1.25rem}';
const submit_script = "document.getElementById('issuer').submit();";
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const style_hash = sha256(style);
const script_hash = sha256(submit_script);

/** The policy of a page: its own style, and (when it has one) the form's target and the line that submits it. */
export function pagePolicy(formTarget: string | null, script = false): string {
  return [
    "default-src 'none'",
    `style-src ${style_hash}`,
    ...(script ? [`script-src ${script_hash}`] : []),
    `form-action ${formTarget ?? "'none'"}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

function layout(title: string, body: string, script = false): string {
  return `<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escaped(title)}</title>
<style>${style}</style>
</head>
<body>
<main>
${body}
</main>${script ? `\n<script>${submit_script}</script>` : ''}
</body>
</html>
`;
}

/** The issuer's form (a POST action): submitted at once, or by its button without JavaScript. */
export function issuerFormPage(action: ShopperAction): string {
  const fields = Object.entries(action.data ?? {})
    .map(([name, value]) => `<input type="hidden" name="${escaped(name)}" value="${escaped(value)}">`)
    .join('\n');
  return layout(
    'Autenticação do cartão',
    `<h1>Autenticação do cartão</h1>
<p>Seu banco vai confirmar que é você quem está pagando. Se a página do banco não abrir sozinha, toque em Continuar.</p>
<form id="issuer" method="post" action="${escaped(action.url)}">
${fields}
<div class="actions"><button type="submit">Continuar</button></div>
</form>`,
    true,
  );
}

/** A page that only says something: a dead link, a return without its result, a wait. */
export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${escaped(title)}</h1>\n<p>${escaped(message)}</p>`);
}

/** The sandbox issuer (CONTRACT §11.2): two buttons that post the shopper's answer back to the gateway's return. */
export function sandboxIssuerPage(returnUrl: string, results: { authenticated: string; refused: string }, amount: string): string {
  const button = (result: string, label: string, cls = '') =>
    `<form method="post" action="${escaped(returnUrl)}"><input type="hidden" name="redirectResult" value="${escaped(result)}"><button type="submit"${cls ? ` class="${cls}"` : ''}>${label}</button></form>`;
  return layout(
    'Banco sandbox: autenticação',
    `<h1>Banco sandbox</h1>
<p>Confirme a compra de ${escaped(amount)} com o seu cartão. Esta é a página de teste do emissor: nenhum banco real é consultado.</p>
<div class="actions">${button(results.authenticated, 'Autenticar')}${button(results.refused, 'Recusar', 'secondary')}</div>`,
  );
}
