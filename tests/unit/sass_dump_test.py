#!/usr/bin/env python3
"""scripts/sass_dump.py's repairs of a CUDA 11.8 cuobjdump listing of a CUDA 13 image: an
instruction printed as bare hex is put back at its address, code addresses become labels, and the
ELF images are found inside a host object's bytes; and the count scripts split a listing with
labels and one with addresses into the same basic blocks."""
import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts'))
import sass_dump  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'bench'))
import sm90_stream_count  # noqa: E402

# As 11.8 prints it: /*0020*/ is missing (it could not decode that instruction, opcode 0x836), its
# two words stand as bare hex after the first instruction's second word.
LISTING = """
	code for sm_90
		Function : k
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, 0x1 ;   /* 0x00000001ff017424 */
                                                                 /* 0x000fe200078e00ff */
        /*0010*/                   ISETP.NE.AND P0, PT, R1, RZ, PT ; /* 0x000000ff0100720c */
                                                                 /* 0x000fe20003f05270 */
                                                                 /* 0x0000000179057836 */
                                                                 /* 0x000fe20000000000 */
        /*0030*/              @P0 BRA 0x10 ;                     /* 0xfffffffc00000947 */
                                                                 /* 0x000fea000383ffff */
        /*0040*/                   BSSY B0, 0x60 ;               /* 0x0000001000007945 */
                                                                 /* 0x000fe20003800000 */
        /*0050*/                   EXIT ;                        /* 0x000000000000794d */
                                                                 /* 0x000fea0003800000 */
        /*0060*/                   BSYNC B0 ;                    /* 0x0000000000007941 */
                                                                 /* 0x000fea0003800000 */
"""


class SassDump(unittest.TestCase):
    def repaired(self):
        return sass_dump.label_addresses(sass_dump.restore_undecoded(LISTING))

    def test_an_undecoded_instruction_is_put_back_at_its_address(self):
        lines = [l for l in self.repaired() if '/*0020*/' in l]
        self.assertEqual(len(lines), 1, self.repaired())
        self.assertIn('UNK_0x836', lines[0])
        self.assertFalse(any(sass_dump.HEX.match(l) for l in self.repaired()), 'no bare hex line left')

    def test_code_addresses_become_labels_before_their_targets(self):
        out = self.repaired()
        bra = next(l for l in out if 'BRA' in l)
        bssy = next(l for l in out if 'BSSY' in l)
        self.assertRegex(bra, r'BRA `\(\.L_x_\d+\)')
        self.assertRegex(bssy, r'BSSY B0, `\(\.L_x_\d+\)')
        for line, target in ((bra, '/*0010*/'), (bssy, '/*0060*/')):
            label = line.split('`(')[1].split(')')[0]
            at = out.index(label + ':')
            self.assertIn(target, out[at + 1])

    def test_the_counts_split_both_forms_alike(self):
        # CUDA 13's cuobjdump prints code addresses (the listing as it stands), the repaired 11.8
        # one labels: the count scripts must start the same basic blocks in both (branch and
        # reconvergence targets included), or their counts differ (they once did, by 3-4 a K block).
        def leaders(lines):
            ins, lead = sm90_stream_count.parse(lines, True)
            return sorted(ins[i]['addr'] for i in lead), [(x['addr'], x['target']) for x in ins]
        addr_form = sass_dump.restore_undecoded(LISTING)
        label_form = self.repaired()
        self.assertEqual(leaders(addr_form), leaders(label_form))
        self.assertEqual(leaders(addr_form)[0], [0x10, 0x60])  # the BRA's target and the BSSY's

    def test_images_are_found_inside_other_bytes(self):
        def image(flags):
            header = bytearray(64)
            header[:4] = b'\x7fELF'
            header[4], header[7] = 2, 0x41
            struct.pack_into('<Q', header, 0x28, 64)      # section headers right after
            struct.pack_into('<HH', header, 0x3a, 64, 1)  # one of 64 bytes
            struct.pack_into('<I', header, 48, flags)
            return bytes(header) + bytes(64)
        blob = b'host object bytes' + image(0x6005a04) + b'\x7fELF not a CUDA one' + image(0xa005a04)
        found = sass_dump.elf_images(blob)
        self.assertEqual([struct.unpack_from('<I', x, 48)[0] for x in found], [0x6005a04, 0xa005a04])
        self.assertEqual([len(x) for x in found], [128, 128])


if __name__ == '__main__':
    unittest.main()
