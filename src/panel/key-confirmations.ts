/** What revoking a key and rotating the signing secret break, said before they are done. */
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../context.ts';
import { refusalError } from '../domain/result.ts';
import { currentSigningSecret } from '../notifications/signing-secrets.ts';
import { listKeys } from '../sellers/sellers-repo.ts';
import { confirmationPage } from './confirm.ts';
import { whenSaoPaulo } from './format.ts';
import { type Current, page } from './session.ts';

export async function revokeConfirmation(ctx: AppContext, current: Current, reply: FastifyReply, publicKey: string) {
  const keys = await listKeys(ctx.db, current.session.sellerId);
  const key = keys.find((k) => k.publicKey === publicKey && k.revokedAt === null);
  if (!key) return page(reply, 404, 'mensagem.eta', keyGone(current));
  const others = keys.filter((k) => k.revokedAt === null && k.publicKey !== publicKey).length;
  const breaks =
    others === 0
      ? 'Esta é a sua única chave ativa: ao revogá-la, toda integração que usa a API para de funcionar na hora — vendas e saques pela API são recusados até você gerar uma nova chave e colocá-la no seu sistema.'
      : `Todo sistema que usa esta chave deixa de ser aceito pela API na hora. ${others === 1 ? 'A outra chave ativa continua' : `As outras ${others} chaves ativas continuam`} valendo.`;
  return confirmationPage(reply, current, {
    title: 'Revogar esta chave?',
    page: 'chaves',
    facts: [
      { term: 'Chave pública', value: key.publicKey },
      { term: 'Criada em', value: whenSaoPaulo(key.createdAt) },
    ],
    warnings: [breaks, 'Uma chave revogada não volta a valer.'],
    action: `/painel/chaves/${key.publicKey}/revogar`,
    button: 'Revogar chave',
    cancel: { href: '/painel/chaves', text: 'Cancelar e manter a chave' },
  });
}

const keyGone = (current: Current) => ({
  title: 'Chave não encontrada',
  message: 'Esta chave não existe nesta conta ou já foi revogada.',
  link: { href: '/painel/chaves', text: 'Voltar às chaves' },
  session: current.session,
});

export async function rotateConfirmation(ctx: AppContext, current: Current, reply: FastifyReply, order: string) {
  const secret = await currentSigningSecret(ctx.db, current.session.sellerId, ctx.clock.now());
  if (!secret.ok) throw refusalError(secret.refusal);
  const pending = secret.value.previousSecretExpiresAt;
  return confirmationPage(reply, current, {
    title: 'Trocar o segredo de assinatura?',
    page: 'chaves',
    facts: [{ term: 'Segredo atual criado em', value: whenSaoPaulo(secret.value.createdAt) }],
    warnings: [
      'As notificações passam a ser assinadas com um segredo novo. O atual ainda assina junto por 24 horas: atualize os seus sistemas nesse prazo, ou eles passam a recusar as notificações por assinatura inválida.',
      ...(pending
        ? [`Um segredo anterior ainda valia até ${whenSaoPaulo(pending)}: ele deixa de assinar agora, e só o atual continua por 24 horas.`]
        : []),
    ],
    action: '/painel/chaves/segredo/trocar',
    button: 'Trocar o segredo',
    cancel: { href: '/painel/chaves', text: 'Cancelar e manter o segredo' },
    hidden: [{ name: 'pedido', value: order }],
  });
}
