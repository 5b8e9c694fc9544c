// The portal's settings, from the environment (read by src/cli/portal.ts only): one zod schema.
import { z } from "zod";
import { TrustProxySchema } from "../serve/admission/proxies.ts";
import { DEFAULT_KEY_LIMIT } from "./partner-keys.ts";

const DEFAULT_PORTAL_PORT = 8081;

const PortalConfigSchema = z.object({
  /** Env PORTAL_PORT. Default 8081. */
  port: z.coerce.number().int().min(0).max(65535).default(DEFAULT_PORTAL_PORT),
  /** Env PORTAL_HOST. Default HOST, else 127.0.0.1. */
  host: z.string().min(1).default("127.0.0.1"),
  /**
   * The portal's public URL (PORTAL_URL), for links in mails and the accepted Origin of forms. Its scheme decides the
   * cookies: https gives `__Host-` cookies with Secure. Default http://HOST:PORT.
   */
  publicUrl: z.url({ protocol: /^https?$/ }).optional(),
  /** SMTP_URL: where mail goes (smtp:// or smtps://); unset: mails are written to the portal's log. */
  smtpUrl: z.url({ protocol: /^smtps?$/ }).optional(),
  /** MAIL_FROM. Default `Developer portal <portal@localhost>`. */
  mailFrom: z.string().min(3).default("Developer portal <portal@localhost>"),
  /** PORTAL_KEY_LIMIT: live keys an account may have. Default 10. */
  keyLimit: z.coerce.number().int().min(1).max(1000).default(DEFAULT_KEY_LIMIT),
  /** PORTAL_APPROVAL: `manual`, new accounts wait for an operator's approval; `auto` (the default), they do not. */
  approval: z.enum(["auto", "manual"], "PORTAL_APPROVAL must be auto or manual").default("auto"),
  /** TRUST_PROXY, as the API reads it: the proxies whose X-Forwarded-For names the client. Default none. */
  trustProxy: TrustProxySchema,
});
export type PortalConfig = z.infer<typeof PortalConfigSchema>;

/** Reads the portal's settings from `env` (PORTAL_PORT, PORTAL_HOST, PORTAL_URL, SMTP_URL, ...). */
export function parsePortalConfig(env: Record<string, string | undefined>): PortalConfig {
  const value = (name: string) => (env[name] === "" ? undefined : env[name]);
  return PortalConfigSchema.parse({
    port: value("PORTAL_PORT"),
    host: value("PORTAL_HOST") ?? value("HOST"),
    publicUrl: value("PORTAL_URL"),
    smtpUrl: value("SMTP_URL"),
    mailFrom: value("MAIL_FROM"),
    keyLimit: value("PORTAL_KEY_LIMIT"),
    approval: value("PORTAL_APPROVAL"),
    trustProxy: value("TRUST_PROXY"),
  });
}
