// Views through Vala and the generated atomr-1.vapi, on the host test device.
int main (string[] args) {
    Test.init (ref args);

    Test.add_func ("/vala/tensor/views", () => {
        var device = new Atomr.Device.mock ();
        try {
            var t = Atomr.Tensor.empty (device, Atomr.Dtype.F64, { 4, 6 });
            assert (t.get_n_elements () == 24);
            var sub = t.slice (0, 1, 3, 1).slice (1, 5, 0, -2);
            assert (sub.get_dim (0) == 2 && sub.get_dim (1) == 3);
            assert (sub.get_stride (1) == -2);
            assert (sub.get_byte_offset () == (6 + 5) * 8);
            var flat = t.reshape ({ -1 });
            assert (flat.get_dim (0) == 24);
            assert (flat.is_contiguous ());
        } catch (Error e) {
            error ("%s", e.message);
        }
    });

    Test.add_func ("/vala/tensor/errors", () => {
        var device = new Atomr.Device.mock ();
        try {
            var t = Atomr.Tensor.empty (device, Atomr.Dtype.F32, { 2, 3 });
            t.transpose (0, 1).reshape ({ 6 });
            assert_not_reached ();
        } catch (Atomr.Error.INVALID_ARGUMENT e) {
            assert ("without a copy" in e.message);
        } catch (Error e) {
            assert_not_reached ();
        }
    });

    Test.add_func ("/vala/tensor/copy", () => {
        var device = new Atomr.Device.mock ();
        try {
            var actor = new Atomr.CopyActor (device);
            var t = Atomr.Tensor.empty (device, Atomr.Dtype.U8, { 2, 3 });
            uint8[] data = { 1, 2, 3, 4, 5, 6 };
            assert (actor.upload_tensor_sync (t, new Bytes (data), null));
            var bytes = actor.download_tensor_sync (t.transpose (0, 1), null);
            unowned uint8[] got = bytes.get_data ();
            assert (got.length == 6);
            assert (got[0] == 1 && got[1] == 4 && got[2] == 2 && got[5] == 6);
        } catch (Error e) {
            error ("%s", e.message);
        }
    });

    return Test.run ();
}
