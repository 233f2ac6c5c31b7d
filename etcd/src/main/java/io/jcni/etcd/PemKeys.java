package io.jcni.etcd;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PEM certificates and private keys, with the JDK alone. The JDK reads X.509 and PKCS#8
 * ({@code BEGIN PRIVATE KEY}); the two older forms that openssl and cfssl still write, PKCS#1
 * ({@code BEGIN RSA PRIVATE KEY}) and SEC1 ({@code BEGIN EC PRIVATE KEY}), are wrapped here into
 * PKCS#8 with a few bytes of DER (why not BouncyCastle: the module README, measured).
 */
public final class PemKeys {
    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----\\s*(.*?)-----END \\1-----", Pattern.DOTALL);
    /** rsaEncryption, 1.2.840.113549.1.1.1, as a DER OID. */
    private static final byte[] RSA_OID = {0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01};
    /** id-ecPublicKey, 1.2.840.10045.2.1. */
    private static final byte[] EC_OID = {0x06, 0x07, 0x2a, (byte) 0x86, 0x48, (byte) 0xce, 0x3d, 0x02, 0x01};

    private PemKeys() {}

    /** One PEM block: its label ({@code PRIVATE KEY}, ...) and its DER bytes. */
    record Block(String label, byte[] der) {}

    static List<Block> blocks(String pem) {
        List<Block> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(pem);
        while (m.find()) {
            String body = m.group(2);
            if (body.contains("Proc-Type:") || body.contains("DEK-Info:")) {
                throw new IllegalArgumentException("encrypted " + m.group(1) + " (a passphrase is not supported: decrypt it with `openssl pkey`)");
            }
            try {
                out.add(new Block(m.group(1), Base64.getMimeDecoder().decode(body)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("bad base64 in " + m.group(1));
            }
        }
        return out;
    }

    /** Every certificate in {@code pem}, in order (a leaf then its intermediates, or a CA bundle). */
    public static List<X509Certificate> certificates(String pem) throws GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<X509Certificate> out = new ArrayList<>();
        for (Block b : blocks(pem)) {
            if (!b.label().equals("CERTIFICATE")) continue;
            out.add((X509Certificate) cf.generateCertificate(new ByteArrayInputStream(b.der())));
        }
        if (out.isEmpty()) throw new GeneralSecurityException("no BEGIN CERTIFICATE block");
        return out;
    }

    /** The private key in {@code pem} (RSA or EC; PKCS#8, PKCS#1 or SEC1; other blocks such as EC PARAMETERS skipped). */
    public static PrivateKey privateKey(String pem) throws GeneralSecurityException {
        for (Block b : blocks(pem)) {
            switch (b.label()) {
                case "PRIVATE KEY" -> {
                    return fromPkcs8(b.der());
                }
                case "RSA PRIVATE KEY" -> {
                    return KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(rsaPkcs1ToPkcs8(b.der())));
                }
                case "EC PRIVATE KEY" -> {
                    return KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(ecSec1ToPkcs8(b.der())));
                }
                case "ENCRYPTED PRIVATE KEY" ->
                    throw new GeneralSecurityException("encrypted private key (a passphrase is not supported: decrypt it with `openssl pkey`)");
                default -> {
                    // EC PARAMETERS and the like come before the key in openssl's output
                }
            }
        }
        throw new GeneralSecurityException("no private key block (BEGIN PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)");
    }

    private static PrivateKey fromPkcs8(byte[] der) throws GeneralSecurityException {
        // The algorithm OID sits in PrivateKeyInfo's AlgorithmIdentifier; looking at it beats trying each factory.
        String alg = indexOf(der, RSA_OID) >= 0 ? "RSA" : indexOf(der, EC_OID) >= 0 ? "EC" : null;
        if (alg == null) throw new GeneralSecurityException("PKCS#8 key of an algorithm other than RSA or EC");
        return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
    }

    /** PrivateKeyInfo { version 0, { rsaEncryption, NULL }, OCTET STRING { RSAPrivateKey } }. */
    static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
        byte[] algId = tlv(0x30, concat(RSA_OID, new byte[] {0x05, 0x00}));
        return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, algId, tlv(0x04, pkcs1)));
    }

    /**
     * PrivateKeyInfo { version 0, { id-ecPublicKey, namedCurve }, OCTET STRING { ECPrivateKey } }; the
     * curve comes from the SEC1 key's {@code [0] parameters}, which openssl and cfssl always write.
     */
    static byte[] ecSec1ToPkcs8(byte[] sec1) throws GeneralSecurityException {
        byte[] curve = null;
        int[] outer = header(sec1, 0);
        if (sec1[0] != 0x30) throw new GeneralSecurityException("EC PRIVATE KEY is not a DER SEQUENCE");
        for (int p = outer[0]; p < outer[0] + outer[1]; ) {
            int[] h = header(sec1, p);
            if ((sec1[p] & 0xff) == 0xa0) {
                int[] oid = header(sec1, h[0]);
                if (sec1[h[0]] != 0x06) throw new GeneralSecurityException("EC PRIVATE KEY: explicit curve parameters are not supported");
                curve = java.util.Arrays.copyOfRange(sec1, h[0], oid[0] + oid[1]);
            }
            p = h[0] + h[1];
        }
        if (curve == null) throw new GeneralSecurityException("EC PRIVATE KEY without its curve (the [0] parameters)");
        byte[] algId = tlv(0x30, concat(EC_OID, curve));
        return tlv(0x30, concat(new byte[] {0x02, 0x01, 0x00}, algId, tlv(0x04, sec1)));
    }

    /** {content offset, content length} of the DER element whose tag is at {@code p}. */
    static int[] header(byte[] der, int p) throws GeneralSecurityException {
        if (p + 1 >= der.length) throw new GeneralSecurityException("truncated DER");
        int len = der[p + 1] & 0xff, off = p + 2;
        if (len > 0x80) {
            int n = len & 0x7f;
            if (n > 3 || off + n > der.length) throw new GeneralSecurityException("bad DER length");
            len = 0;
            for (int i = 0; i < n; i++) len = (len << 8) | (der[off + i] & 0xff);
            off += n;
        } else if (len == 0x80) {
            throw new GeneralSecurityException("indefinite DER length");
        }
        if (off + len > der.length) throw new GeneralSecurityException("truncated DER");
        return new int[] {off, len};
    }

    static byte[] tlv(int tag, byte[] content) {
        ByteArrayOutputStream o = new ByteArrayOutputStream(content.length + 6);
        o.write(tag);
        int n = content.length;
        if (n < 0x80) {
            o.write(n);
        } else if (n < 0x100) {
            o.write(0x81);
            o.write(n);
        } else if (n < 0x10000) {
            o.write(0x82);
            o.write(n >> 8);
            o.write(n);
        } else {
            o.write(0x83);
            o.write(n >> 16);
            o.write(n >> 8);
            o.write(n);
        }
        o.writeBytes(content);
        return o.toByteArray();
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        for (byte[] p : parts) o.writeBytes(p);
        return o.toByteArray();
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= Math.min(hay.length, 64 + needle.length); i++) {
            for (int j = 0; j < needle.length; j++) if (hay[i + j] != needle[j]) continue outer;
            return i;
        }
        return -1;
    }
}
