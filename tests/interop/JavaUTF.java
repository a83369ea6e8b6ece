// Interop peer for tests/test_interop.py: Java's own DataInputStream.readUTF
// and DataOutputStream.writeUTF, driven over stdin/stdout by a tiny framed
// protocol (all integers big-endian, as DataOutputStream writes them):
//   op 1 READ : int nbytes, int n, nbytes of writeUTF records -> reads n
//               records with readUTF; replies int n, then per string
//               int nchars + its UTF-16 code units (writeChars);
//               or int -1 + writeUTF(the exception's text).
//   op 2 WRITE: int n, then per string int nchars + code units -> writeUTF
//               each into one buffer; replies int nbytes + the bytes;
//               or int -1 + writeUTF(the exception's text).
//   op 0      : exit.
import java.io.*;

public class JavaUTF {
    public static void main(String[] args) throws IOException {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
        while (true) {
            int op = in.readInt();
            if (op == 0) break;
            if (op == 1) {
                byte[] blob = new byte[in.readInt()];
                int n = in.readInt();
                in.readFully(blob);
                DataInputStream r = new DataInputStream(new ByteArrayInputStream(blob));
                String[] got = new String[n];
                String error = null;
                try {
                    for (int i = 0; i < n; i++) got[i] = r.readUTF();
                    if (r.available() != 0) error = "trailing bytes: " + r.available();
                } catch (IOException e) {
                    error = e.toString();
                }
                if (error != null) {
                    out.writeInt(-1);
                    out.writeUTF(error);
                } else {
                    out.writeInt(n);
                    for (String s : got) {
                        out.writeInt(s.length());
                        out.writeChars(s);
                    }
                }
            } else if (op == 2) {
                int n = in.readInt();
                String[] strs = new String[n];
                for (int i = 0; i < n; i++) {
                    char[] cs = new char[in.readInt()];
                    for (int j = 0; j < cs.length; j++) cs[j] = in.readChar();
                    strs[i] = new String(cs);
                }
                ByteArrayOutputStream buf = new ByteArrayOutputStream();
                DataOutputStream w = new DataOutputStream(buf);
                try {
                    for (String s : strs) w.writeUTF(s);
                    w.flush();
                    out.writeInt(buf.size());
                    buf.writeTo(out);
                } catch (IOException e) {
                    out.writeInt(-1);
                    out.writeUTF(e.toString());
                }
            }
            out.flush();
        }
        out.flush();
    }
}
