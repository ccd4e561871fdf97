"""vm/rxe-run --hub: a student's QEMU guest joins the course's hub (QEMU's
own L2TPv3 netdev, not User-Mode Linux's driver) and earns its Lab 3 key
from the receiver in a User-Mode Linux guest. One QEMU boot: about 15 s
here under software emulation, so it runs in the lane beside the rest.
"""

from __future__ import annotations

from tests.kitbase import KitCase
from tests.vm.test_hub import HubGuestCase


class HubQemuGuest(HubGuestCase):
    def test_a_qemu_guest_earns_its_key_from_a_uml_receiver_through_the_hub(self) -> None:
        self.earns_its_key(str(KitCase.kit / "vm/rxe-run"))
