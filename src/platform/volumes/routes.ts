/** The volume endpoints of E2B's API (`/volumes`), as its SDK's `Volume` class calls them; each team's own. */
import type { Route } from '../http/types';
import { validate } from '../http/validate';
import { callerOf } from '../teams/model';
import { newVolumeSchema } from './requests';
import { volumeNotFound, type VolumeService } from './service';
import { volumeAndToken, volumeInfo } from './view';

export function volumeRoutes(volumes: VolumeService): Route[] {
  return [
    {
      method: 'POST',
      path: '/volumes',
      auth: 'api-key',
      handler: async (req) => {
        const body = validate(newVolumeSchema, req.body ?? {}, 'body');
        return { status: 201, body: volumeAndToken(await volumes.create(body.name, callerOf(req).teamID)) };
      },
    },
    {
      method: 'GET',
      path: '/volumes',
      auth: 'api-key',
      handler: async (req) => ({ status: 200, body: (await volumes.list(callerOf(req))).map(volumeInfo) }),
    },
    {
      method: 'GET',
      path: '/volumes/:volumeID',
      auth: 'api-key',
      handler: async (req) => ({ status: 200, body: volumeAndToken(await volumes.get(req.params.volumeID, callerOf(req))) }),
    },
    {
      method: 'DELETE',
      path: '/volumes/:volumeID',
      auth: 'api-key',
      handler: async (req) => {
        if (!(await volumes.destroy(req.params.volumeID, callerOf(req)))) throw volumeNotFound(req.params.volumeID);
        return { status: 204 };
      },
    },
  ];
}
