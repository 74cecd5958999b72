-- Each new ledger row (one hop of one turn) is added to its day's rollup in the same statement. A duplicate insert
-- (ON CONFLICT DO NOTHING, a retried write) fires no trigger, so a hop is counted once however often it is written.
CREATE TRIGGER `usage_hops_roll_up` AFTER INSERT ON `usage_hops`
BEGIN
	INSERT INTO `usage_daily` (`tenant_id`, `day`, `key_id`, `end_user`, `adapter`, `requests`, `hops`, `input_tokens`, `cached_input_tokens`, `output_tokens`)
	VALUES (NEW.`tenant_id`, NEW.`day`, NEW.`key_id`, NEW.`end_user`, NEW.`adapter`, NEW.`requests`, 1, NEW.`input_tokens`, NEW.`cached_input_tokens`, NEW.`output_tokens`)
	ON CONFLICT (`tenant_id`, `day`, `key_id`, `end_user`, `adapter`) DO UPDATE SET
		`requests` = `requests` + excluded.`requests`,
		`hops` = `hops` + 1,
		`input_tokens` = `input_tokens` + excluded.`input_tokens`,
		`cached_input_tokens` = `cached_input_tokens` + excluded.`cached_input_tokens`,
		`output_tokens` = `output_tokens` + excluded.`output_tokens`;
END;
--> statement-breakpoint
-- The ledger is what the rollup was built from: rewriting a row would leave the two disagreeing.
CREATE TRIGGER `usage_hops_no_update` BEFORE UPDATE ON `usage_hops`
BEGIN
	SELECT RAISE(ABORT, 'usage_hops is append-only');
END;
