/**
 * What the sandbox API needs from templates, and nothing more: the built-in base template and the template builder
 * each provide a resolver, so sandboxes never import the builder.
 */
import type { AttachedImage } from './record';

/** What a sandbox needs from its template. */
export interface TemplateForSandbox {
  templateID: string;
  /** The name the template was created with (E2B calls it alias), if any. */
  alias?: string;
  buildID: string;
  /** Read-only root filesystem layers, topmost first. */
  layers: string[];
  memoryMB: number;
  cpuCount: number;
  /** The disk of its sandboxes in MB; absent: the platform's default. */
  diskSizeMB?: number;
  /** Run by the agent after /init, in the background; absent for templates without one. */
  startCmd?: string;
  /** The sandbox is ready when this exits 0 (polled), within readyTimeoutMs. */
  readyCmd?: string;
  /** ENV, USER and WORKDIR as the last step left them. */
  envs: Record<string, string>;
  user: string;
  workdir?: string;
  /**
   * Of a snapshot or a fork: the MCP images its sandbox had attached (mcp-attach.ts), attached to each sandbox made
   * from it (their layers held like the template's), and the images still being pulled, pulled for it.
   */
  attachedImages?: AttachedImage[];
  /** Of a snapshot: made from a sandbox's files, so what was launched there is started again (mcp-gateway-restart.ts). */
  fromSandboxFiles?: true;
}

export interface TemplateResolver {
  /** By template ID or alias, among what `teamID` may start (its own, public ones); undefined when there is none. */
  resolve(idOrAlias: string, teamID: string): Promise<TemplateForSandbox | undefined>;
  /** The IDs and aliases of every ready template (a fleet host advertises them, so creates go where they can run). */
  names(): Promise<string[]>;
}
