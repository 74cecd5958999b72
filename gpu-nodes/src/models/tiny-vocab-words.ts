/** The mesh's own vocabulary (adapter and role names) so prompts used in tests tokenize to few tokens. */
const MESH_WORDS = `
  chat agent coding genui route summary user assistant system tool model adapter request response
  message prompt token answer question task plan code function return value error test data json query
  result output input stream context cache node server client edge mesh lora base
`;

const COMMON_ENGLISH_WORDS = `
  the be to of and a in that have i it for not on with he as you do at this but his by from they we
  say her she or an will my one all would there their what so up out if about who get which go me when
  make can like time no just him know take people into year your good some could them see other than
  then now look only come its over think also back after use two how our work first well way even new
  want because any these give day most us is are was were been has had did does said made here where
  why very more many much such long little great old right big high small large next early young
  important few public bad same able last own never world life hand part child eye woman man place
  week case point government company number group problem fact hello hi thanks thank please yes okay
  sure help need find tell ask show try call keep let put mean seem leave feel write read run move
  live play turn start stop open close change follow learn name file line word text list item page
  form button view screen color image table row column key type string number true false null class
  import export const async await print def var while loop each every before between under again still
  always often today tomorrow yesterday morning night water food home house school city country money
  book story friend family love happy nice weather simple short quick fast slow next example idea
  reason information service program computer language english write search send receive
`;

/** Word pieces of the tiny model's vocabulary, in a fixed order so the vocabulary is reproducible. */
export const TINY_VOCAB_WORDS: readonly string[] = [
  ...new Set(`${MESH_WORDS} ${COMMON_ENGLISH_WORDS}`.split(/\s+/).filter((word) => word.length > 0)),
];
