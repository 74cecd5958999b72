export {
  FIXTURE_MODEL_PATH,
  LOCAL_MODELS_DIR as TEST_MODELS_DIR,
  REPO_ROOT,
} from "../../infra/local/resolve-local-models.ts";
