/**
 * Which sandbox a signed `/files` URL belongs to, when the URL does not say (with E2B_SANDBOX_URL set, the SDK builds
 * `<sandbox URL>/files?path=&username=&signature=&signature_expiration=`, no sandbox ID in it). The signature is made
 * from the sandbox's access token, which only the platform holds: it is recomputed with each sandbox's token until
 * one matches. The gateway asks this (`POST /signed-urls/owner`) and sends the request on to that sandbox, whose
 * agent checks the signature again.
 */
import { z } from 'zod';
import { SIGNED_URL_OWNER_PATH, type SignedUrlQuery } from '../../contract/file-signature';
import type { Route } from '../http/types';
import { ApiError } from '../http/types';
import { validate } from '../http/validate';
import type { SandboxService } from './service';

const signedUrlQuery = z.object({
  path: z.string({ message: 'expected the path of the signed URL' }),
  operation: z.enum(['read', 'write'], { message: 'expected read (GET) or write (POST)' }),
  username: z.string({ message: 'expected the username of the signed URL (empty when it has none)' }),
  signature: z.string().min(1).max(256, { message: 'expected a v1_ signature' }),
  expiration: z.number().int().min(0).optional(),
});

export function signedUrlOwnerRoute(service: SandboxService): Route {
  return {
    method: 'POST',
    path: SIGNED_URL_OWNER_PATH,
    // The operator's gateway asks: it learns which sandbox of any team signed a URL.
    auth: 'admin',
    handler: async (req) => {
      const q: SignedUrlQuery = validate(signedUrlQuery, req.body, 'body');
      const owner = await service.signedUrlOwner(q);
      if (!owner) throw new ApiError(404, 'no sandbox of this platform signed that URL');
      return { status: 200, body: owner };
    },
  };
}
