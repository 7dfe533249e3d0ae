import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { parseDocument } from '../../domain/documents.ts';
import { validationError } from '../../domain/errors.ts';
import { BODY_ERRORS, OPERATOR_ERRORS, responses } from '../../http/openapi.ts';
import { Fields, type Router } from '../../http/router.ts';
import { insertSeller, issueKey } from '../sellers-repo.ts';
import { CreatedSeller, common, Email, Name, sellerView } from './common.ts';

const SellerBody = Fields(
  { name: Name, email: Email, document: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])) },
  { title: 'SellerRequest' },
);

function normalisedDocument(raw: string | null | undefined): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  const parsed = parseDocument(raw);
  if (!parsed.ok) throw validationError([{ field: 'document', message: 'must be a valid CPF or CNPJ' }]);
  return parsed.value;
}

export function createSellerRoute(app: Router, ctx: AppContext): void {
  app.post(
    '/admin/sellers',
    {
      schema: {
        ...common,
        operationId: 'createSeller',
        summary: 'Create a seller and its first key pair',
        description: "The answer carries the private key: it is shown only here. The seller's id is the `userId` of its notifications.",
        body: SellerBody,
        bodyExamples: {
          minimal: { summary: 'Name and e-mail', value: { name: 'Loja Exemplo', email: 'loja@example.com' } },
          withDocument: {
            summary: 'With a CNPJ (punctuation allowed, kept normalised)',
            value: { name: 'Loja Exemplo Ltda', email: 'financeiro@loja.example.com', document: '11.222.333/0001-81' },
          },
        },
        response: responses({ 201: CreatedSeller }, [
          ...OPERATOR_ERRORS,
          ...BODY_ERRORS,
          ['VALIDATION_ERROR', 'a field breaks its rule or is unknown, or `document` is not a valid CPF or CNPJ'],
        ]),
      },
    },
    async (request, reply) => {
      const document = normalisedDocument(request.body.document);
      const { seller, key } = await ctx.db.tx(async (q) => {
        const seller = await insertSeller(q, { name: request.body.name, email: request.body.email, document });
        return { seller, key: await issueKey(q, seller.id) };
      });
      return reply.status(201).send({ ...sellerView(seller), publicKey: key.publicKey, privateKey: key.privateKey });
    },
  );
}
