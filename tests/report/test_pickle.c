/*
 * test_pickle.c - _snapshot() as a pickle, byte for byte (protocol 4, no
 * memo, no framing; frames as lists of one dict; python3 reads the same
 * bytes in check_pickle.py).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "report/report.h"

#include "history_fixture.h"

static char *hex(const struct sbuf *b)
{
	static char text[8192];

	assert_true(b->len * 2 < sizeof(text));
	for (size_t i = 0; i < b->len; i++)
		sprintf(text + 2 * i, "%02x", (unsigned char)b->data[i]);
	text[2 * b->len] = '\0';
	return text;
}

static void render(struct sbuf *out, const struct npa_flavor *fl, int ndevices)
{
	struct npa_snapshot snap;
	struct npa_trace trace;
	struct npa_conf conf;

	hf_snapshot(&snap);
	hf_trace(&trace);
	hf_conf(&conf);
	sbuf_init(out);
	assert_int_equal(report_snapshot_pickle(out, &snap, ndevices ? &trace : NULL,
						ndevices, fl, &conf), 0);
}

static const char npu_hex[] =
	"80047d288c087365676d656e74735d287d288c066465766963654b008c076164"
	"64726573738a06000000403a7f8c0a746f74616c5f73697a654a000020008c0e"
	"616c6c6f63617465645f73697a654d00048c0b6163746976655f73697a654d00"
	"048c0e7265717565737465645f73697a654de8038c0673747265616d4b008c0c"
	"7365676d656e745f747970658c05736d616c6c8c0f7365676d656e745f706f6f"
	"6c5f69644b004b00868c0d69735f657870616e6461626c65898c06626c6f636b"
	"735d287d288c07616464726573738a06000000403a7f8c0473697a654d00048c"
	"0e7265717565737465645f73697a654de8038c0573746174658c106163746976"
	"655f616c6c6f63617465648c066672616d65735d287d288c046e616d658c0561"
	"6c6c6f638c0866696c656e616d658c0f2f776f726b2f72756e2e74726163658c"
	"046c696e654b037565757d288c07616464726573738a06000400403a7f8c0473"
	"697a654a00fc1f008c0e7265717565737465645f73697a654b008c0573746174"
	"658c08696e6163746976658c066672616d65735d75658c066672616d65735d28"
	"7d288c046e616d658c05616c6c6f638c0866696c656e616d658c0f2f776f726b"
	"2f72756e2e74726163658c046c696e654b03756575658c0d6465766963655f74"
	"72616365735d285d287d288c06616374696f6e8c0d7365676d656e745f616c6c"
	"6f638c04616464728a06000000403a7f8c0473697a654a000020008c06737472"
	"65616d4b008c07706f6f6c5f69644b004b00868c0774696d655f75738a070040"
	"1e18240a068c066672616d65735d287d288c046e616d658c05616c6c6f638c08"
	"66696c656e616d658c0f2f776f726b2f72756e2e74726163658c046c696e654b"
	"037565757d288c06616374696f6e8c05616c6c6f638c04616464728a06000000"
	"403a7f8c0473697a654de8038c0673747265616d4b008c07706f6f6c5f69644b"
	"004b00868c0774696d655f75738a0701401e18240a068c066672616d65735d28"
	"7d288c046e616d658c05616c6c6f638c0866696c656e616d658c0f2f776f726b"
	"2f72756e2e74726163658c046c696e654b037565757d288c06616374696f6e8c"
	"036f6f6d8c0b6465766963655f667265654a000010008c0473697a654a000200"
	"048c0673747265616d4b008c07706f6f6c5f69644b004b01868c0774696d655f"
	"75738a0702401e18240a068c066672616d65735d287d288c046e616d658c0874"
	"72756e636174658c0866696c656e616d658c182f6d6e742f74656e736f72732f"
	"646576696365302f6269678c046c696e654b007565756565752e";

/* "allocator_settings": {...} between device_traces and the closing SETITEMS. */
static const char settings_hex[] =
	"8c12616c6c6f6361746f725f73657474696e67737d288c175059544f5243485f"
	"435544415f414c4c4f435f434f4e468c37657870616e6461626c655f7365676d"
	"656e74733a547275652c726f756e6475705f706f776572325f6469766973696f"
	"6e733a5b343a345d8c0e6d61785f73706c69745f73697a654affffffff8c1c67"
	"6172626167655f636f6c6c656374696f6e5f7468726573686f6c644700000000"
	"000000008c13657870616e6461626c655f7365676d656e7473888c1b70696e6e"
	"65645f6e756d5f72656769737465725f746872656164734b018c1a72656c6561"
	"73655f6c6f636b5f6f6e5f637564616d616c6c6f63898c1d70696e6e65645f75"
	"73655f637564615f686f73745f7265676973746572898c18726f756e6475705f"
	"706f776572325f6469766973696f6e737d288c01314b008c01324b008c01344b"
	"048c01384b008c0231364b008c0233324b008c0236344b008c033132384b008c"
	"033235364b008c033531324b008c04313032344b008c04323034384b008c0434"
	"3039364b008c04383139324b008c0531363338344b008c0533323736384b0075"
	"75";

static void npu_pickle_is_byte_exact(void **state)
{
	struct sbuf out;

	(void)state;
	render(&out, &npa_flavor_npu, 1);
	assert_int_equal(out.len, 954);
	assert_string_equal(hex(&out), npu_hex);
	sbuf_release(&out);
}

/* "device_traces": [[]] then SETITEMS, STOP. */
static void no_history_gives_empty_device_traces(void **state)
{
	struct npa_snapshot snap;
	struct npa_conf conf;
	struct sbuf out;
	const char tail[] = "\x8c\x0d" "device_traces" "](]e" "u.";

	(void)state;
	hf_snapshot(&snap);
	hf_conf(&conf);
	sbuf_init(&out);
	assert_int_equal(report_snapshot_pickle(&out, &snap, NULL, 1, &npa_flavor_npu, &conf), 0);
	assert_true(out.len > sizeof(tail) - 1);
	assert_memory_equal(out.data + out.len - (sizeof(tail) - 1), tail, sizeof(tail) - 1);
	sbuf_release(&out);
}

/* The same dict with allocator_settings as its last key. */
static void cuda_pickle_adds_allocator_settings(void **state)
{
	struct sbuf out;
	char want[sizeof(npu_hex) + sizeof(settings_hex)];

	(void)state;
	snprintf(want, sizeof(want), "%.*s%s752e", (int)strlen(npu_hex) - 4, npu_hex,
		 settings_hex);
	render(&out, &npa_flavor_cuda, 1);
	assert_int_equal(out.len, 954 + 417);
	assert_string_equal(hex(&out), want);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(npu_pickle_is_byte_exact),
		cmocka_unit_test(no_history_gives_empty_device_traces),
		cmocka_unit_test(cuda_pickle_adds_allocator_settings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
