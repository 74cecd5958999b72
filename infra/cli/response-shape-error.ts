/** The server answered 2xx with a body that is not what a molmesh sends: the wrong URL, or a proxy's page. */
export class ResponseShapeError extends Error {
  override name = "ResponseShapeError";
}
