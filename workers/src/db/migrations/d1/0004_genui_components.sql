CREATE TABLE `genui_components` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`source` text NOT NULL,
	`compiled` text NOT NULL,
	`report` text NOT NULL,
	`host_origin` text NOT NULL,
	`render_token_hash` text NOT NULL,
	`render_token_expires_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `genui_components_tenant` ON `genui_components` (`tenant_id`,`created_at`);