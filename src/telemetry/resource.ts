import {
  detectResources,
  type Resource,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from "@opentelemetry/resources";
import { VERSION } from "../version.js";
import type { TelemetrySettings } from "./settings.js";

/**
 * Who sends the traces and metrics: the service, its version and this replica
 * (PORTFOLIO_REPLICA_ID); OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win, as the
 * OpenTelemetry specification has it.
 */
export function serviceResource(settings: Pick<TelemetrySettings, "serviceName" | "instance">) {
  const ours: Resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": VERSION,
    "service.instance.id": settings.instance,
  });
  return ours.merge(
    detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }),
  );
}
