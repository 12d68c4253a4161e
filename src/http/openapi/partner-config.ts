import { ZPartnerConfig } from '../../domain/apps/partner-config.schemas';
import { operation, type OpenApiPaths } from './operation';

/** src/http/routes/partner-config.ts */
export const partnerConfigPaths: OpenApiPaths = {
  '/v2/partners/config': {
    get: operation({
      operationId: 'getPartnerConfig',
      summary: "Read the credential's configuration (also how to check credentials)",
      description: 'Any valid credential may read it, whatever its scopes.',
      tags: ['Configuration'],
      auth: 'app',
      withoutErrors: [424],
      responses: { 200: { description: 'The partner configuration.', schema: ZPartnerConfig } },
    }),
  },
};
