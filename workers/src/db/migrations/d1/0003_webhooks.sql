CREATE TABLE `inbound_deliveries` (
	`endpoint_id` text NOT NULL,
	`delivery_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`received_at` integer NOT NULL,
	PRIMARY KEY(`endpoint_id`, `delivery_id`)
);
--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`events` text NOT NULL,
	`status` text DEFAULT 'enabled' NOT NULL,
	`disabled_reason` text,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`inbound` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_by_tenant` ON `webhook_endpoints` (`tenant_id`,`created_at`,`id`);