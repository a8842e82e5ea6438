import { END_LINE, eventLine, parseContextRequest, parseExecuteRequest, parseLanguage } from '../../../src/code-interpreter/wire';

describe('parseExecuteRequest', () => {
  test('code alone runs in the default context', () => {
    expect(parseExecuteRequest('{"code":"1+1"}')).toEqual({ ok: true, value: { code: '1+1', envs: {} } });
  });

  test('the SDK sends absent options as missing keys or null; a language name is normalised', () => {
    expect(parseExecuteRequest('{"code":"1","context_id":null,"language":"JS","env_vars":{"A":"b"}}')).toEqual({
      ok: true,
      value: { code: '1', language: 'javascript', envs: { A: 'b' } },
    });
  });

  test.each([
    ['{"code": ', /not valid JSON/],
    ['[1]', /JSON object/],
    ['{}', /code must be a string/],
    ['{"code":"1","language":"cobol"}', /language "cobol" is not supported: use one of python, javascript, js, bash/],
    ['{"code":"1","context_id":"c","language":"python"}', /context_id or language, not both/],
    ['{"code":"1","env_vars":{"A":1}}', /env_vars.A must be a string/],
    ['{"code":"1","env_vars":{"A B":"x"}}', /not a variable name/],
    ['{"code":"1","context_id":5}', /context_id must be a string/],
  ])('%s is refused with 400', (body, message) => {
    const parsed = parseExecuteRequest(body);
    expect(parsed).toMatchObject({ ok: false, status: 400 });
    expect(parsed.ok === false && parsed.message).toMatch(message);
  });
});

describe('parseContextRequest', () => {
  test('language defaults to python; cwd is kept', () => {
    expect(parseContextRequest('{"cwd":"/tmp"}')).toEqual({ ok: true, value: { language: 'python', cwd: '/tmp' } });
    expect(parseContextRequest('')).toEqual({ ok: true, value: { language: 'python' } });
  });

  test('a relative cwd or an unknown language is refused', () => {
    expect(parseContextRequest('{"cwd":"tmp"}')).toMatchObject({ ok: false, status: 400, message: 'cwd must be an absolute path' });
    expect(parseContextRequest('{"language":"r"}')).toMatchObject({ ok: false, status: 400 });
    expect(parseLanguage(7)).toMatchObject({ ok: false });
  });
});

describe('eventLine', () => {
  test('MIME types become the SDK Result fields; others keep their name', () => {
    const line = JSON.parse(
      eventLine({
        type: 'result',
        data: { 'text/plain': '42', 'image/png': 'iVBOR', 'application/json': { a: 1 }, 'application/vnd.custom': 'x' },
        main: true,
      }),
    );
    expect(line).toEqual({ type: 'result', text: '42', png: 'iVBOR', json: { a: 1 }, 'application/vnd.custom': 'x', is_main_result: true });
  });

  test('streams, errors and the execution count', () => {
    expect(JSON.parse(eventLine({ type: 'stderr', text: 'e\n' }))).toMatchObject({ type: 'stderr', text: 'e\n' });
    expect(JSON.parse(eventLine({ type: 'error', name: 'E', value: 'v', traceback: 't' }))).toEqual({
      type: 'error',
      name: 'E',
      value: 'v',
      traceback: 't',
    });
    expect(JSON.parse(eventLine({ type: 'count', n: 3 }))).toEqual({ type: 'number_of_executions', execution_count: 3 });
    expect(JSON.parse(END_LINE)).toEqual({ type: 'end_of_execution' });
  });
});
